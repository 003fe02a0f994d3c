package replicas

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// NOTIFY_BROKER_ROLE_CHANGED is taken from the controllers' hosts only:
// IP literals count at once (an IPv4-mapped IPv6 peer as its IPv4), host
// names once resolved, and a name that stops resolving keeps its last
// addresses.
func TestControllerIPs(t *testing.T) {
	p := NewControllerIPs([]string{"10.0.0.5:9878", "[fd00::7]:9878", "localhost:9878"})
	for ip, want := range map[string]bool{
		"10.0.0.5": true, "::ffff:10.0.0.5": true, "fd00::7": true,
		"10.0.0.6": false, "127.0.0.1": false, "127.0.0.2": false,
	} {
		if got := p.Allowed(netip.MustParseAddr(ip)); got != want {
			t.Errorf("before Resolve, Allowed(%s) = %v, want %v", ip, got, want)
		}
	}
	if p.Allowed(netip.Addr{}) {
		t.Error("the zero address (no peer) allowed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Resolve(ctx, net.DefaultResolver); err != nil {
		t.Fatal(err)
	}
	if !p.Allowed(netip.MustParseAddr("127.0.0.1")) || p.Allowed(netip.MustParseAddr("127.0.0.2")) {
		t.Fatalf("after Resolve: %v", p.IPs())
	}
	// A lookup that fails keeps the name's addresses.
	failing := &net.Resolver{PreferGo: true, Dial: func(context.Context, string, string) (net.Conn, error) {
		return nil, errors.New("no DNS")
	}}
	p.hosts = []string{"10.0.0.5", "rocketgo-nowhere.invalid"}
	if err := p.Resolve(ctx, failing); err == nil {
		t.Fatal("a failed lookup reported no error")
	}
	if !p.Allowed(netip.MustParseAddr("127.0.0.1")) || !p.Allowed(netip.MustParseAddr("10.0.0.5")) {
		t.Fatalf("a failed lookup dropped addresses: %v", p.IPs())
	}
	// A lookup that succeeds replaces the set.
	p.hosts = []string{"10.0.0.5"}
	if err := p.Resolve(ctx, failing); err != nil {
		t.Fatal(err)
	}
	if got := p.IPs(); len(got) != 1 || got[0] != netip.MustParseAddr("10.0.0.5") {
		t.Fatalf("after the list shrank: %v", got)
	}
}

// A push is confirmed by the controller's answer when it names no newer
// epoch and, at the same epoch, the same master.
func TestConfirm(t *testing.T) {
	id := func(v int64) *int64 { return &v }
	ctl := ReplicaState{MasterID: id(1), MasterAddr: "127.0.0.1:10911", MasterEpoch: 3}
	for _, c := range []struct {
		name   string
		pushed ReplicaState
		ok     bool
	}{
		{"the same", ctl, true},
		{"the same master, another address", ReplicaState{MasterID: id(1), MasterAddr: "10.9.9.9:1", MasterEpoch: 3}, true},
		{"older", ReplicaState{MasterID: id(2), MasterAddr: "127.0.0.1:20911", MasterEpoch: 2}, true},
		{"forged far ahead", ReplicaState{MasterID: id(2), MasterAddr: "10.6.6.6:10911", MasterEpoch: 2147483000}, false},
		{"one ahead", ReplicaState{MasterID: id(1), MasterAddr: ctl.MasterAddr, MasterEpoch: 4}, false},
		{"another master, same epoch", ReplicaState{MasterID: id(2), MasterAddr: "10.6.6.6:10911", MasterEpoch: 3}, false},
		{"no master, same epoch", ReplicaState{MasterEpoch: 3}, false},
	} {
		err := Confirm(c.pushed, ctl)
		if (err == nil) != c.ok || (err != nil && !errors.Is(err, ErrNotConfirmed)) {
			t.Errorf("%s: %v", c.name, err)
		}
	}
}

// A controller whose name moves to a new address (a restarted pod): its
// push is refused until the name is looked up again, which the refusal
// asks for (Misses); then its new address is let in and the old one not.
func TestControllerIPsNameMoves(t *testing.T) {
	dns := testutil.NewDNS(t)
	dns.Set("ctl.rocketgo.test", "127.0.0.2")
	p := NewControllerIPs([]string{"ctl.rocketgo.test:9878"})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := p.Resolve(ctx, dns.Resolver()); err != nil {
		t.Fatal(err)
	}
	if !p.Allowed(netip.MustParseAddr("127.0.0.2")) {
		t.Fatalf("the controller's address refused: %v", p.IPs())
	}
	select {
	case <-p.Misses():
		t.Fatal("an allowed address signalled a miss")
	default:
	}
	dns.Set("ctl.rocketgo.test", "127.0.0.3")
	if p.Allowed(netip.MustParseAddr("127.0.0.3")) {
		t.Fatal("the new address let in before a lookup")
	}
	select {
	case <-p.Misses():
	default:
		t.Fatal("a refusal did not ask for a lookup")
	}
	if err := p.Resolve(ctx, dns.Resolver()); err != nil {
		t.Fatal(err)
	}
	if !p.Allowed(netip.MustParseAddr("127.0.0.3")) || p.Allowed(netip.MustParseAddr("127.0.0.2")) {
		t.Fatalf("after the lookup: %v", p.IPs())
	}
}
