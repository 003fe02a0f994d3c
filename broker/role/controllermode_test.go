package role

import (
	"net/netip"
	"testing"

	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/replicas"
)

// Outside controller mode a NOTIFY_BROKER_ROLE_CHANGED is ignored whoever
// sends it; in controller mode it is considered only from the hosts of
// controllerAddr (IP literals from the start, before any lookup), and a
// push before registration changes nothing.
func TestRoleChangeAllowed(t *testing.T) {
	plain := newHarness(t, nil, nil)
	if !plain.RoleChangeAllowed(netip.MustParseAddr("192.0.2.1")) {
		t.Fatal("outside controller mode a push is refused")
	}
	var roles int
	b := newHarness(t, func(c *Config) {
		c.HA.BrokerRole = ha.Slave // as the broker starts in controller mode
		c.Controller.Addr = "192.0.2.10:9878; [2001:db8::10]:9878;"
	}, func(d *Deps) {
		d.ControllerMode = true
		d.SetRole = func(int64, ha.Role) { roles++ }
	})
	for ip, want := range map[string]bool{
		"192.0.2.10": true, "::ffff:192.0.2.10": true, "2001:db8::10": true,
		"192.0.2.11": false, "127.0.0.1": false,
	} {
		if got := b.RoleChangeAllowed(netip.MustParseAddr(ip)); got != want {
			t.Errorf("RoleChangeAllowed(%s) = %v, want %v", ip, got, want)
		}
	}
	if b.RoleChangeAllowed(netip.Addr{}) {
		t.Error("a connection without a peer address allowed")
	}
	// Not registered (the controllers were never asked): ignored.
	id := int64(9)
	if err := b.RoleChanged(replicas.ReplicaState{MasterID: &id, MasterAddr: "192.0.2.66:10911", MasterEpoch: 2147483000}); err != nil {
		t.Fatal(err)
	}
	if !b.IsSlave() || b.ControllerBrokerID() != -1 || roles != 0 {
		t.Fatalf("slave %v, controller id %d, roles taken %d", b.IsSlave(), b.ControllerBrokerID(), roles)
	}
}
