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
	st, err := newRaftStream(Peer{Raft: "127.0.0.3:0"}, []Peer{{Raft: "127.0.0.3:0"}}, testutil.Logger())
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
