package proxy

import (
	"context"

	"github.com/rocketgo/rocketgo/remoting"
)

// transport carries the proxy's Remoting requests to name servers and
// brokers: over TCP in cluster mode (remoting.Client), and in local mode to
// the broker of the same process without a socket (localTransport).
type transport interface {
	Invoke(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error)
	InvokeOneway(ctx context.Context, addr string, req *remoting.Command) error
	SetRequestHandler(fn func(addr string, req *remoting.Command))
	Close() error
}

// localTransport sends what is addressed to the local broker through an
// in-process connection, and anything else (name servers, other brokers'
// groups and topics) over TCP.
type localTransport struct {
	addr   string // the local broker's address as it registers it
	local  *remoting.Local
	remote *remoting.Client
}

func (t *localTransport) Invoke(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error) {
	if addr == t.addr {
		return t.local.Invoke(ctx, req)
	}
	return t.remote.Invoke(ctx, addr, req)
}

func (t *localTransport) InvokeOneway(ctx context.Context, addr string, req *remoting.Command) error {
	if addr == t.addr {
		return t.local.InvokeOneway(req)
	}
	return t.remote.InvokeOneway(ctx, addr, req)
}

func (t *localTransport) SetRequestHandler(fn func(addr string, req *remoting.Command)) {
	t.local.SetRequestHandler(func(req *remoting.Command) { fn(t.addr, req) })
	t.remote.SetRequestHandler(fn)
}

func (t *localTransport) Close() error {
	t.local.Close()
	return t.remote.Close()
}
