// Package adminclient makes the control-plane calls of rocketgo's tools
// (mqadmin, mqbench) over remoting.Client: a request whose answer must be
// SUCCESS, name-server failover, topic routes, cluster info, topic creation,
// queue offsets, as Apache's MQClientAPIImpl makes them.
//
// Owns: one remoting.Client and the name-server list; the JSON shapes of the
// answers it decodes.
// Never: prints, retries a broker call, or waits longer than Timeout per call
// (a host that does not answer fails the call, it never hangs the tool).
package adminclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/auth/signature"
	"github.com/rocketgo/rocketgo/remoting"
)

// DefaultTimeout bounds every call, as Apache's tools' 5 s-or-less timeouts.
const DefaultTimeout = 5 * time.Second

// ErrNoNameServer is returned by name-server calls when the list is empty.
var ErrNoNameServer = errors.New("no name server address: -n or NAMESRV_ADDR")

// Client reaches name servers and brokers. Not for concurrent reconfiguration:
// set NameServers and Timeout before the first call.
type Client struct {
	rc          *remoting.Client
	NameServers []string
	Timeout     time.Duration
}

// New returns a client for the name servers ns (none is allowed for
// broker-only calls).
func New(ns []string) *Client {
	return &Client{rc: remoting.NewClient(zerolog.Nop()), NameServers: ns, Timeout: DefaultTimeout}
}

// SetTLS makes the client dial TLS when t says clients do (tls.enable).
// Call it before the first request.
func (c *Client) SetTLS(t *remoting.TLS) { c.rc.SetTLS(t) }

// ParseNameServers splits Apache's "a:9876;b:9876" list, dropping blanks.
func ParseNameServers(list string) []string {
	var out []string
	for _, s := range strings.Split(list, ";") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// Close closes the connections. Idempotent.
func (c *Client) Close() error { return c.rc.Close() }

// Invoke sends one request and returns whatever code the answer carries.
func (c *Client) Invoke(addr string, code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	ctx, cancel := context.WithTimeout(context.Background(), c.Timeout)
	defer cancel()
	resp, err := c.rc.Invoke(ctx, addr, remoting.NewRequest(code, ext, body))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", addr, err)
	}
	return resp, nil
}

// CodeError is an answer other than SUCCESS; its text is Apache's
// MQBrokerException's "CODE: n DESC: remark".
type CodeError struct {
	Addr   string
	Code   int32
	Remark string
}

func (e *CodeError) Error() string {
	return fmt.Sprintf("%s: CODE: %d DESC: %s", e.Addr, e.Code, e.Remark)
}

// Call sends one request and requires a SUCCESS answer (else a *CodeError).
func (c *Client) Call(addr string, code int32, ext map[string]string, body []byte) (*remoting.Command, error) {
	resp, err := c.Invoke(addr, code, ext, body)
	if err != nil {
		return nil, err
	}
	if resp.Code != remoting.Success {
		return nil, &CodeError{Addr: addr, Code: resp.Code, Remark: resp.Remark}
	}
	return resp, nil
}

// CallNamesrv tries the name servers in order until one answers SUCCESS. A
// refusal (a *CodeError) is the name servers' answer and is not retried on
// the next: they share their tables.
func (c *Client) CallNamesrv(code int32, ext map[string]string) (*remoting.Command, error) {
	if len(c.NameServers) == 0 {
		return nil, ErrNoNameServer
	}
	var last error
	for _, addr := range c.NameServers {
		resp, err := c.Call(addr, code, ext, nil)
		if err == nil {
			return resp, nil
		}
		last = err
		var ce *CodeError
		if errors.As(err, &ce) {
			break
		}
	}
	return nil, last
}

// EachNamesrv sends the request to every name server (writes: KV configs,
// topic deletion), stopping at the first failure.
func (c *Client) EachNamesrv(code int32, ext map[string]string) error {
	if len(c.NameServers) == 0 {
		return ErrNoNameServer
	}
	for _, addr := range c.NameServers {
		if _, err := c.Call(addr, code, ext, nil); err != nil {
			return err
		}
	}
	return nil
}

// SetCredentials makes the client sign every request with accessKey and
// secretKey (AclClientRPCHook: AccessKey, then the HMAC-SHA1 Signature over
// the fields and body), as ACL 1.0 and 2.0 brokers check. Call it before
// the first request.
func (c *Client) SetCredentials(accessKey, secretKey string) {
	key := signature.NewKey(secretKey)
	c.rc.SetSigner(func(req *remoting.Command) {
		req.Set(signature.FieldAccessKey, accessKey)
		s := key.Signer()
		req.Set(signature.FieldSignature, string(s.Sign(nil, req)))
		key.Release(s)
	})
}
