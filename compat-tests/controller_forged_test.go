package compattest

// A forged NOTIFY_BROKER_ROLE_CHANGED (1008) against a rocketgo broker in
// controller mode under three rocketgo controllers: masterEpoch
// 2147483000 and a master at an attacker's address, sent once from a host
// that is not a controller's (127.0.0.2; the controllers listen on, and
// dial from, 127.0.0.1) and once from the controllers' own host. The
// broker must stay master under brokerId 0, keep taking sends, and never
// dial the attacker; the controller must still call it master at its own
// epoch; the controller's own state pushed from its host is still taken.

import (
	"fmt"
	"net"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// invokeFrom sends req to addr on a connection from local IP from.
func invokeFrom(from, addr string, req *rawCmd) (*rawCmd, error) {
	d := net.Dialer{Timeout: 3 * time.Second, LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	conn, err := d.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return invokeOn(conn, req, 10*time.Second)
}

// attacker listens on ip at a free port and the next one (the HA port a
// slave would dial) and counts the connections it is offered.
func attacker(t *testing.T, ip string) (string, *atomic.Int64) {
	t.Helper()
	p, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	var n atomic.Int64
	for _, port := range []int{p, p + 1} {
		ln, err := net.Listen("tcp", fmt.Sprintf("%s:%d", ip, port))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { ln.Close() })
		go func() {
			for {
				c, err := ln.Accept()
				if err != nil {
					return
				}
				n.Add(1)
				c.Close()
			}
		}()
	}
	return fmt.Sprintf("%s:%d", ip, p), &n
}

func TestControllerForgedRoleChange(t *testing.T) {
	start := time.Now()
	name := uniq("ctlforge")
	g := startControllers(t, name+"-raft")
	g.leader(30 * time.Second)
	state := liveState(g)
	c, err := startNamesrvConf(name+"-ns", "")
	if c != nil {
		t.Cleanup(c.stop)
	}
	if err != nil {
		t.Fatal(err)
	}
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	b := startGoCtlBroker(t, filepath.Join(workDir, name+"-b0"), port, c.nsAddr, strings.Join(g.addrs, ";"))
	if !waitFor(t, 30*time.Second, func() bool { return state().masterAddr == b.addr }) {
		t.Fatalf("the broker never master: %+v", state())
	}
	before := state()
	topic := uniq("Forged")
	// The controller names the master a moment before the broker took the
	// role: until then the topic is refused.
	if !waitFor(t, 30*time.Second, func() bool {
		resp, err := rawInvoke(b.addr, createTopicReq(topic, 4, 4), 5*time.Second)
		return err == nil && resp.Code == 0
	}) {
		t.Fatalf("topic %s never created on %s", topic, b.addr)
	}
	createTopicOn(t, c.nsAddr, b.addr, topic) // and routed
	sends := func(when string) {
		t.Helper()
		if !waitFor(t, 10*time.Second, func() bool {
			resp, err := sendRaw(b.addr, topic, "")
			return err == nil && resp.Code == 0
		}) {
			resp, err := sendRaw(b.addr, topic, "")
			t.Fatalf("%s: send refused: %+v %v", when, resp, err)
		}
	}
	sends("before the forged pushes")
	t.Logf("set up in %v", time.Since(start))

	evil, dialled := attacker(t, "127.0.0.9")
	forged := func() *rawCmd {
		return javaRequest(1008, map[string]string{"masterBrokerId": "7", "masterAddress": evil,
			"masterEpoch": "2147483000", "syncStateSetEpoch": "2147483000"},
			[]byte(`{"syncStateSet":[7],"syncStateSetEpoch":2147483000}`))
	}
	resp, err := invokeFrom("127.0.0.2", b.addr, forged())
	if err != nil || resp.Code != 16 { // NO_PERMISSION
		t.Fatalf("forged push from a stranger: %+v %v, want NO_PERMISSION", resp, err)
	}
	resp, err = invokeFrom("127.0.0.1", b.addr, forged())
	if err != nil || resp.Code == 0 {
		t.Fatalf("forged push from the controllers' host: %+v %v, want a refusal", resp, err)
	}
	// Several replica info polls (syncBrokerMetadataPeriod=1000) later.
	time.Sleep(3 * time.Second)
	sends("after the forged pushes")
	if ids := routeIDs(c.nsAddr, topic); ids[0] != b.addr {
		t.Fatalf("route %v: the broker is not brokerId 0", ids)
	}
	if s := state(); s.masterAddr != b.addr || s.masterEpoch != before.masterEpoch {
		t.Fatalf("controller: master %s epoch %d, want %s epoch %d", s.masterAddr, s.masterEpoch, b.addr, before.masterEpoch)
	}
	// What the controller itself would push is taken (confirmed by 1004).
	resp, err = invokeFrom("127.0.0.1", b.addr, javaRequest(1008, map[string]string{
		"masterBrokerId": fmt.Sprint(before.masterID), "masterAddress": b.addr,
		"masterEpoch": fmt.Sprint(before.masterEpoch), "syncStateSetEpoch": "1"},
		[]byte(fmt.Sprintf(`{"syncStateSet":[%d],"syncStateSetEpoch":1}`, before.masterID))))
	if err != nil || resp.Code != 0 {
		t.Fatalf("the controller's own state pushed from its host: %+v %v", resp, err)
	}
	if n := dialled.Load(); n != 0 {
		t.Fatalf("the broker dialled the attacker's address %d times", n)
	}
	t.Logf("forged pushes refused; %v in all", time.Since(start))
}
