package controller

import (
	"errors"
	"net"
	"testing"
	"time"

	"github.com/hashicorp/raft"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// A stranger that reaches a controller's raft port gets nothing from raft:
// an AppendEntries claiming a far higher term, from an address that is no
// peer, is not answered and leaves the follower's term alone (raft alone
// takes it as the new leader's heartbeat and the real leader steps down),
// while a connection from a peer's address is kept.
func TestRaftRefusesStrangers(t *testing.T) {
	g := startGroup(t, nil)
	li := g.leader()
	leader, follower := g.cs[li], g.cs[(li+1)%3]
	term := follower.node.r.CurrentTerm()

	// The stranger dials from 127.0.0.3, an address no peer has (loopback
	// answers all of 127/8 on Linux).
	st, err := newRaftStream(Peer{Raft: "127.0.0.3:0"}, []Peer{{Raft: "127.0.0.3:0"}}, net.DefaultResolver, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	stranger := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: st, MaxPool: 1, Timeout: 2 * time.Second})
	defer stranger.Close()
	var resp raft.AppendEntriesResponse
	err = stranger.AppendEntries(raft.ServerID(leader.self.ID), raft.ServerAddress(follower.self.Raft), &raft.AppendEntriesRequest{
		RPCHeader: raft.RPCHeader{ProtocolVersion: raft.ProtocolVersionMax, ID: []byte(leader.self.ID), Addr: []byte(leader.self.Raft)},
		Term:      term + 1000,
	}, &resp)
	if err == nil {
		t.Fatalf("a stranger's AppendEntries was answered: %+v (follower term %d, was %d)", resp, follower.node.r.CurrentTerm(), term)
	}
	if got := follower.node.r.CurrentTerm(); got != term {
		t.Fatalf("follower term %d after the stranger, was %d", got, term)
	}
	// A peer's address is accepted: the stream layer dials from it.
	c, err := net.DialTimeout("tcp", follower.self.Raft, 2*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond))
	var one [1]byte
	_, err = c.Read(one[:])
	if ne := net.Error(nil); !errors.As(err, &ne) || !ne.Timeout() {
		t.Fatalf("a connection from a peer's address was closed: %v", err)
	}
}

// A peer named by host name comes back from a restart on another address
// (a Kubernetes pod's new IP under the same name): its connections are let
// in once the name resolves to it, and the address it left is refused.
func TestRaftPeerNameMoves(t *testing.T) {
	dns := testutil.NewDNS(t)
	dns.Set("peer.rocketgo.test", "127.0.0.2")
	st, err := newRaftStream(Peer{Raft: "127.0.0.4:0"}, []Peer{{Raft: "127.0.0.4:0"}, {Raft: "peer.rocketgo.test:9879"}},
		dns.Resolver(), testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	accepted := make(chan net.Conn, 8)
	go func() {
		for {
			c, err := st.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	// from dials the stream from ip; it reports whether the connection
	// reached raft, false when the stream closed it.
	from := func(ip string) bool {
		d := net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 2 * time.Second}
		c, err := d.Dial("tcp", st.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		closed := make(chan struct{})
		go func() {
			var one [1]byte
			_, _ = c.Read(one[:]) // returns when either side closes
			close(closed)
		}()
		select {
		case a := <-accepted:
			a.Close()
			return true
		case <-closed:
			return false
		}
	}
	if !from("127.0.0.2") {
		t.Fatal("the peer's address was refused")
	}
	if from("127.0.0.3") {
		t.Fatal("an address no peer has was let in")
	}
	// The refused connection just looked the names up: the next lookup
	// comes a second later at the soonest.
	dns.Set("peer.rocketgo.test", "127.0.0.3")
	testutil.WaitFor(t, 5*time.Second, func() bool { return from("127.0.0.3") })
	if from("127.0.0.2") {
		t.Fatal("the address the peer left was still let in")
	}
}
