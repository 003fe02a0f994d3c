package testutil

import (
	"context"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"

	"golang.org/x/net/dns/dnsmessage"
)

// DNS is a name server on 127.0.0.1 (UDP) whose A records a test sets and
// changes: a host name that moves to another address, as a Kubernetes
// pod's does when it restarts. Resolver looks names up through it with Go's
// own resolver code; names it does not hold are answered NXDOMAIN.
type DNS struct {
	pc net.PacketConn

	mu    sync.Mutex
	names map[string][]netip.Addr // lower case, no trailing dot
}

// NewDNS starts the server; it stops when the test ends.
func NewDNS(t testing.TB) *DNS {
	t.Helper()
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	d := &DNS{pc: pc, names: map[string][]netip.Addr{}}
	done := make(chan struct{})
	go func() {
		defer close(done)
		d.serve()
	}()
	t.Cleanup(func() {
		_ = pc.Close() // ends serve
		<-done
	})
	return d
}

// Set makes name resolve to ips (IPv4 literals), replacing what it had.
func (d *DNS) Set(name string, ips ...string) {
	var as []netip.Addr
	for _, ip := range ips {
		as = append(as, netip.MustParseAddr(ip))
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.names[strings.ToLower(strings.TrimSuffix(name, "."))] = as
}

// Resolver is a resolver asking only this server.
func (d *DNS) Resolver() *net.Resolver {
	addr := d.pc.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var dl net.Dialer
		return dl.DialContext(ctx, "udp", addr)
	}}
}

func (d *DNS) serve() {
	buf := make([]byte, 512)
	for {
		n, from, err := d.pc.ReadFrom(buf)
		if err != nil {
			return
		}
		if out := d.answer(buf[:n]); out != nil {
			_, _ = d.pc.WriteTo(out, from) // a lost answer is a lookup retry, as on a real network
		}
	}
}

// answer builds the reply to one query; nil for what is no query.
func (d *DNS) answer(q []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(q)
	if err != nil {
		return nil
	}
	qs, err := p.AllQuestions()
	if err != nil || len(qs) != 1 {
		return nil
	}
	question := qs[0]
	name := strings.ToLower(strings.TrimSuffix(question.Name.String(), "."))
	d.mu.Lock()
	ips, known := d.names[name]
	d.mu.Unlock()
	rh := dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired}
	if !known {
		rh.RCode = dnsmessage.RCodeNameError
	}
	b := dnsmessage.NewBuilder(nil, rh)
	b.EnableCompression()
	if b.StartQuestions() != nil || b.Question(question) != nil || b.StartAnswers() != nil {
		return nil
	}
	if question.Type == dnsmessage.TypeA {
		for _, ip := range ips {
			rr := dnsmessage.ResourceHeader{Name: question.Name, Type: dnsmessage.TypeA, Class: dnsmessage.ClassINET}
			if b.AResource(rr, dnsmessage.AResource{A: ip.As4()}) != nil {
				return nil
			}
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
