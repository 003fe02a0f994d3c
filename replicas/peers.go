package replicas

// Who may push NOTIFY_BROKER_ROLE_CHANGED (1008): the hosts of
// controllerAddr. A controller sends the push on a connection of its own,
// so the broker sees the controller host's IP as the peer; anyone else
// could only be forging it. The set is read on an event loop (atomic, no
// lock); host names are looked up off it (Resolve), at start, at every
// controller leader lookup, and soon after a push from an address the set
// lacks (Misses), so that a controller whose name moved to a new address
// (a restarted Kubernetes pod) is let in again.

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"slices"
	"sync/atomic"
)

// ControllerIPs is the set of IPs the controllers of controllerAddr have.
type ControllerIPs struct {
	hosts []string // controllerAddr's hosts, in order
	ips   atomic.Pointer[map[netip.Addr]struct{}]
	miss  chan struct{} // buffer 1: Allowed refused an address
}

// NewControllerIPs returns the set for addrs (host:port); IP literals are
// in it at once, host names once Resolve looked them up.
func NewControllerIPs(addrs []string) *ControllerIPs {
	p := &ControllerIPs{miss: make(chan struct{}, 1)}
	set := map[netip.Addr]struct{}{}
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil {
			host = a
		}
		p.hosts = append(p.hosts, host)
		if ip, err := netip.ParseAddr(host); err == nil {
			set[ip.Unmap()] = struct{}{}
		}
	}
	p.ips.Store(&set)
	return p
}

// Allowed reports whether ip is one of the controllers'. It does not
// block; a refusal signals Misses.
func (p *ControllerIPs) Allowed(ip netip.Addr) bool {
	_, ok := (*p.ips.Load())[ip.Unmap()]
	if !ok {
		select {
		case p.miss <- struct{}{}:
		default:
		}
	}
	return ok
}

// Misses is signalled when Allowed refused an address: the owner looks
// the names up again (Resolve), at a pace it bounds.
func (p *ControllerIPs) Misses() <-chan struct{} { return p.miss }

// Resolve looks the host names up and replaces the set. A name that
// cannot be looked up keeps the addresses it had: a DNS outage must not
// lock the controllers out.
func (p *ControllerIPs) Resolve(ctx context.Context, r *net.Resolver) error {
	old := *p.ips.Load()
	set := map[netip.Addr]struct{}{}
	var errs []error
	failed := false
	for _, h := range p.hosts {
		if ip, err := netip.ParseAddr(h); err == nil {
			set[ip.Unmap()] = struct{}{}
			continue
		}
		ips, err := r.LookupNetIP(ctx, "ip", h)
		if err != nil {
			errs = append(errs, fmt.Errorf("controller host %s: %w", h, err))
			failed = true
			continue
		}
		for _, ip := range ips {
			set[ip.Unmap()] = struct{}{}
		}
	}
	if failed {
		for ip := range old {
			set[ip] = struct{}{}
		}
	}
	p.ips.Store(&set)
	return errors.Join(errs...)
}

// IPs returns the set, for logs and tests.
func (p *ControllerIPs) IPs() []netip.Addr {
	var out []netip.Addr
	for ip := range *p.ips.Load() {
		out = append(out, ip)
	}
	slices.SortFunc(out, netip.Addr.Compare)
	return out
}
