package controller

import (
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"time"

	"github.com/hashicorp/go-hclog"
	"github.com/hashicorp/raft"
	raftboltdb "github.com/hashicorp/raft-boltdb/v2"
	"github.com/rs/zerolog"
)

// fsm applies committed event batches to the State.
type fsm struct{ st *State }

// Apply runs for every committed log entry, in order, on every controller.
func (f *fsm) Apply(l *raft.Log) any {
	var evs []event
	if err := json.Unmarshal(l.Data, &evs); err != nil {
		// A entry this controller cannot read: the logs are rocketgo's own,
		// so this is a bug or a damaged store; the state must not diverge
		// silently.
		return fmt.Errorf("controller: decode log entry %d: %w", l.Index, err)
	}
	f.st.applyEvents(evs)
	return nil
}

func (f *fsm) Snapshot() (raft.FSMSnapshot, error) {
	b, err := f.st.marshal()
	if err != nil {
		return nil, fmt.Errorf("controller: snapshot: %w", err)
	}
	return fsmSnapshot(b), nil
}

func (f *fsm) Restore(rc io.ReadCloser) error {
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		return fmt.Errorf("controller: read snapshot: %w", err)
	}
	return f.st.restore(b)
}

type fsmSnapshot []byte

func (s fsmSnapshot) Persist(sink raft.SnapshotSink) error {
	if _, err := sink.Write(s); err != nil {
		_ = sink.Cancel() // the write error is the one to report
		return fmt.Errorf("controller: write snapshot: %w", err)
	}
	return sink.Close()
}

func (fsmSnapshot) Release() {}

// node is this controller's raft member: the raft instance and the stores
// it owns.
type node struct {
	r     *raft.Raft
	store *raftboltdb.BoltStore
	trans *raft.NetworkTransport
}

// storeDir is where this controller keeps its raft files.
func (c Config) storeDir() string {
	root := c.ControllerStorePath
	if root == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			home = os.TempDir()
		}
		root = filepath.Join(home, "DledgerController")
	}
	return filepath.Join(root, "raft-"+c.ControllerDLegerSelfID)
}

// startNode opens (or creates and bootstraps) the raft member.
func startNode(cfg Config, peers []Peer, self Peer, f raft.FSM, log zerolog.Logger) (*node, error) {
	hl := hclog.New(&hclog.LoggerOptions{Name: "raft", Level: hclog.Warn, Output: log})
	rc := raft.DefaultConfig()
	rc.LocalID = raft.ServerID(self.ID)
	rc.HeartbeatTimeout = millis(cfg.ControllerRaftHeartbeatTimeoutMillis)
	rc.ElectionTimeout = millis(cfg.ControllerRaftElectionTimeoutMillis)
	rc.LeaderLeaseTimeout = min(rc.HeartbeatTimeout, 500*time.Millisecond)
	rc.CommitTimeout = min(rc.CommitTimeout, rc.HeartbeatTimeout/2)
	rc.SnapshotThreshold = cfg.ControllerRaftSnapshotThreshold
	rc.Logger = hl

	dir := cfg.storeDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("controller: create %s: %w", dir, err)
	}
	store, err := raftboltdb.NewBoltStore(filepath.Join(dir, "raft.db"))
	if err != nil {
		return nil, fmt.Errorf("controller: open raft store in %s: %w", dir, err)
	}
	snaps, err := raft.NewFileSnapshotStoreWithLogger(dir, 2, hl)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("controller: open snapshots in %s: %w", dir, err)
	}
	stream, err := newRaftStream(self, peers, net.DefaultResolver, log)
	if err != nil {
		store.Close()
		return nil, fmt.Errorf("controller: raft transport on %s: %w", self.Raft, err)
	}
	trans := raft.NewNetworkTransportWithConfig(&raft.NetworkTransportConfig{Stream: stream, MaxPool: 3,
		Timeout: 5 * time.Second, Logger: hl})
	has, err := raft.HasExistingState(store, store, snaps)
	if err != nil {
		trans.Close()
		store.Close()
		return nil, fmt.Errorf("controller: read raft state: %w", err)
	}
	if !has {
		// Every peer bootstraps with the same configuration: raft accepts
		// that, and no peer must be started first.
		var servers []raft.Server
		for _, p := range peers {
			servers = append(servers, raft.Server{ID: raft.ServerID(p.ID), Address: raft.ServerAddress(p.Raft)})
		}
		if err := raft.BootstrapCluster(rc, store, store, snaps, trans, raft.Configuration{Servers: servers}); err != nil {
			trans.Close()
			store.Close()
			return nil, fmt.Errorf("controller: bootstrap raft: %w", err)
		}
	}
	r, err := raft.NewRaft(rc, f, store, store, snaps, trans)
	if err != nil {
		trans.Close()
		store.Close()
		return nil, fmt.Errorf("controller: start raft: %w", err)
	}
	return &node{r: r, store: store, trans: trans}, nil
}

// close stops raft and closes its files.
func (n *node) close() error {
	err := n.r.Shutdown().Error()
	if cerr := n.trans.Close(); err == nil {
		err = cerr
	}
	if cerr := n.store.Close(); err == nil {
		err = cerr
	}
	return err
}
