package processor

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/internal/ctltest"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/replicas"
)

// Outside controller mode GET_BROKER_EPOCH_CACHE is Apache's SYSTEM_ERROR
// and NOTIFY_BROKER_ROLE_CHANGED is ignored with SUCCESS.
func TestControllerCodesOutsideControllerMode(t *testing.T) {
	b, cl := serveBroker(t, nil, nil)
	resp := invoke(t, cl, b, remoting.NewRequest(remoting.GetBrokerEpochCache, nil, nil))
	if resp.Code != remoting.SystemError || resp.Remark != "this request only for controllerMode " {
		t.Fatalf("1007: %d %q", resp.Code, resp.Remark)
	}
	resp = invoke(t, cl, b, remoting.NewRequest(remoting.NotifyBrokerRoleChanged, map[string]string{"masterBrokerId": "1",
		"masterAddress": "127.0.0.1:1", "masterEpoch": "9", "syncStateSetEpoch": "1"}, []byte(`{"syncStateSet":[1],"syncStateSetEpoch":1}`)))
	if resp.Code != remoting.Success || b.Role.IsSlave() || b.Config().BrokerID != 0 {
		t.Fatalf("1008 outside controller mode: %d %q, slave %v", resp.Code, resp.Remark, b.Role.IsSlave())
	}
}

// A controller-mode broker whose controllers do not answer stays a slave
// without a role: sends refused, a push before registration ignored, a
// malformed push refused with SYSTEM_ERROR, the epoch cache empty.
func TestControllerModeBeforeRegistration(t *testing.T) {
	b, cl := serveBroker(t, func(c *broker.Config) {
		c.Controller.EnableControllerMode = true
		c.Controller.ControllerAddr = "127.0.0.1:1" // nothing listens there
	}, nil)
	if !b.Role.IsSlave() || !b.Role.ControllerMode() || b.Role.ControllerBrokerID() != -1 {
		t.Fatalf("slave %v, controller mode %v, controller id %d", b.Role.IsSlave(), b.Role.ControllerMode(), b.Role.ControllerBrokerID())
	}
	resp := invoke(t, cl, b, sendV2("TopicCtl", []byte("x")))
	if resp.Code != remoting.SystemBusy {
		t.Fatalf("send before a role: %d %q", resp.Code, resp.Remark)
	}
	push := map[string]string{"masterBrokerId": "1", "masterAddress": "127.0.0.1:1", "masterEpoch": "3", "syncStateSetEpoch": "1"}
	resp = invoke(t, cl, b, remoting.NewRequest(remoting.NotifyBrokerRoleChanged, push, []byte(`{"syncStateSet":[1],"syncStateSetEpoch":1}`)))
	if resp.Code != remoting.Success || !b.Role.IsSlave() {
		t.Fatalf("push before registration: %d %q, slave %v", resp.Code, resp.Remark, b.Role.IsSlave())
	}
	for _, bad := range []struct {
		field, value string
		body         string
	}{
		{"masterEpoch", "x", `{}`},
		{"masterBrokerId", "1e9", `{}`},
		{"masterEpoch", "3", `{"syncStateSet":"nope"`},
	} {
		h := map[string]string{}
		for k, v := range push {
			h[k] = v
		}
		h[bad.field] = bad.value
		resp = invoke(t, cl, b, remoting.NewRequest(remoting.NotifyBrokerRoleChanged, h, []byte(bad.body)))
		if resp.Code != remoting.SystemError {
			t.Errorf("push with %s=%s body %s: %d %q", bad.field, bad.value, bad.body, resp.Code, resp.Remark)
		}
	}
	resp = invoke(t, cl, b, remoting.NewRequest(remoting.GetBrokerEpochCache, nil, nil))
	if resp.Code != remoting.Success || !strings.Contains(string(resp.Body), `"brokerName":"b"`) ||
		!strings.Contains(string(resp.Body), `"epochList":[]`) {
		t.Fatalf("1007: %d %s", resp.Code, resp.Body)
	}
}

// Two brokers in controller mode under an in-process rocketgo controller
// (make unit runs it with the race detector): the first is elected master
// (brokerId 0, takes sends), the second is a slave under its controller
// id, replicates with AutoSwitch HA and joins the SyncStateSet; the master
// shut down, the controller elects the slave, which takes the sends with
// the messages the old master acknowledged.
func TestControllerModeFailoverInProcess(t *testing.T) {
	ctl := ctltest.Start(t)
	ctlMode := func(c *broker.Config) {
		c.BrokerName = "ctlb"
		c.Controller.EnableControllerMode = true
		c.Controller.ControllerAddr = ctl
		c.Controller.SyncBrokerMetadataPeriod = 200
		c.Controller.BrokerHeartbeatInterval = 200
		c.Controller.AllAckInSyncStateSet = true
		c.HA.HASendHeartbeatInterval = 200
	}
	a := runBroker(t, ctlMode, nil)
	cl := remoting.NewClient(testutil.Logger())
	t.Cleanup(func() { _ = cl.Close() })
	testutil.WaitFor(t, 30*time.Second, func() bool { return !a.Role.IsSlave() && a.Config().BrokerID == 0 })
	b := runBroker(t, ctlMode, nil)
	testutil.WaitFor(t, 30*time.Second, func() bool { return b.Role.IsSlave() && b.Role.ControllerBrokerID() == 2 && b.Config().BrokerID == 2 })
	rc := replicas.NewClient(cl, ctl, 3*time.Second)
	testutil.WaitFor(t, 30*time.Second, func() bool {
		st, err := rc.ReplicaInfo(context.Background(), "ctlb")
		return err == nil && len(st.SyncStateSet) == 2
	})
	for range 10 {
		expectCode(t, invoke(t, cl, a, sendV2("TBW102", []byte("before the failover"))), remoting.Success)
	}
	if resp := invoke(t, cl, b, sendV2("TBW102", []byte("x"))); resp.Code != remoting.SystemBusy {
		t.Fatalf("send to the slave: %d %q", resp.Code, resp.Remark)
	}
	end := a.Store.MaxPhyOffset()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := a.Shutdown(ctx); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 30*time.Second, func() bool { return !b.Role.IsSlave() && b.Config().BrokerID == 0 })
	if got := b.Store.MaxPhyOffset(); got < end {
		t.Fatalf("new master's commit log ends at %d, the old master acknowledged up to %d", got, end)
	}
	expectCode(t, invoke(t, cl, b, sendV2("TBW102", []byte("after the failover"))), remoting.Success)
	resp := invoke(t, cl, b, remoting.NewRequest(remoting.GetBrokerEpochCache, nil, nil))
	if resp.Code != remoting.Success || !strings.Contains(string(resp.Body), `"brokerId":0`) || !strings.Contains(string(resp.Body), `"epoch":2`) {
		t.Fatalf("1007 on the new master: %d %s", resp.Code, resp.Body)
	}
}

// rawFrom sends req to addr on a connection from the local IP from (any
// 127/8 address is this host's) and returns the answer.
func rawFrom(t *testing.T, from, addr string, req *remoting.Command) *remoting.Command {
	t.Helper()
	d := net.Dialer{Timeout: 3 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		t.Fatalf("dial %s from %s: %v", addr, from, err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(10 * time.Second))
	req.Opaque = 77
	if _, err := conn.Write(remoting.AppendFrame(nil, req)); err != nil {
		t.Fatal(err)
	}
	for {
		resp, err := remoting.ReadFrame(conn)
		if err != nil {
			t.Fatalf("request %d from %s: %v", req.Code, from, err)
		}
		if resp.IsResponse() && resp.Opaque == req.Opaque {
			return resp
		}
	}
}

// A forged NOTIFY_BROKER_ROLE_CHANGED (a huge master epoch, another
// master at an attacker's address) does not move a controller-mode
// master: from a host that is not a controller's it is refused
// NO_PERMISSION; from the controller's host, the controller leader's
// answer (still master, epoch 1) does not confirm it, so it is refused
// and what is applied is the controller's state. A push the controller
// confirms is SUCCESS; the epoch file never holds the forged epoch.
func TestRoleChangedForged(t *testing.T) {
	ctl := ctltest.Start(t) // listens on 127.0.0.1
	a := runBroker(t, func(c *broker.Config) {
		c.BrokerName = "ctlf"
		c.Controller.EnableControllerMode = true
		c.Controller.ControllerAddr = ctl
		c.Controller.SyncBrokerMetadataPeriod = 200
		c.Controller.BrokerHeartbeatInterval = 200
		c.Controller.AllAckInSyncStateSet = true // a lone SYNC_MASTER acknowledges itself
	}, nil)
	testutil.WaitFor(t, 30*time.Second, func() bool { return !a.Role.IsSlave() && a.Config().BrokerID == 0 })
	self := strconv.FormatInt(a.Role.ControllerBrokerID(), 10)
	push := func(id, addr, epoch string) *remoting.Command {
		return remoting.NewRequest(remoting.NotifyBrokerRoleChanged, map[string]string{"masterBrokerId": id,
			"masterAddress": addr, "masterEpoch": epoch, "syncStateSetEpoch": "1"},
			[]byte(`{"syncStateSet":[`+id+`],"syncStateSetEpoch":1}`))
	}
	forged := func() *remoting.Command { return push("99", "127.0.0.9:10911", "2147483000") }
	stillMaster := func(when string) {
		t.Helper()
		if a.Role.IsSlave() || a.Config().BrokerID != 0 {
			t.Fatalf("%s: slave %v, brokerId %d", when, a.Role.IsSlave(), a.Config().BrokerID)
		}
		cl := remoting.NewClient(testutil.Logger())
		defer cl.Close()
		expectCode(t, invoke(t, cl, a, sendV2("TBW102", []byte(when))), remoting.Success)
	}

	stillMaster("before any push")
	resp := rawFrom(t, "127.0.0.2", a.Config().Addr(), forged())
	if resp.Code != remoting.NoPermission {
		t.Fatalf("forged push from a stranger: %d %q", resp.Code, resp.Remark)
	}
	stillMaster("after a stranger's push")

	t0 := time.Now()
	resp = rawFrom(t, "127.0.0.1", a.Config().Addr(), forged())
	if resp.Code != remoting.SystemError || !strings.Contains(resp.Remark, "not confirmed") {
		t.Fatalf("forged push from the controller's host: %d %q", resp.Code, resp.Remark)
	}
	t.Logf("forged push from the controller's host refused in %v", time.Since(t0))
	stillMaster("after a push the controller does not confirm")
	resp = rawFrom(t, "127.0.0.1", a.Config().Addr(), push("99", "127.0.0.9:10911", "1"))
	if resp.Code != remoting.SystemError {
		t.Fatalf("push of another master at the controller's epoch: %d %q", resp.Code, resp.Remark)
	}
	stillMaster("after a push of another master at the same epoch")

	resp = rawFrom(t, "127.0.0.1", a.Config().Addr(), push(self, a.Config().Addr(), "1"))
	if resp.Code != remoting.Success {
		t.Fatalf("the controller's own state pushed: %d %q", resp.Code, resp.Remark)
	}
	stillMaster("after a confirmed push")
	cl := remoting.NewClient(testutil.Logger())
	defer cl.Close()
	resp = invoke(t, cl, a, remoting.NewRequest(remoting.GetBrokerEpochCache, nil, nil))
	if resp.Code != remoting.Success || strings.Contains(string(resp.Body), "2147483000") ||
		!strings.Contains(string(resp.Body), `"epoch":1`) {
		t.Fatalf("epoch cache: %d %s", resp.Code, resp.Body)
	}
}
