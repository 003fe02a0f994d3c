// Package storetest opens real stores for the tests of the packages built
// on the store: a started store in a test's folder, shut down when the
// test ends, and its queues read back as records.
//
// Owns: test scaffolding only. Never: imported by non-test code.
package storetest

import (
	"context"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
)

// Open opens and starts a store in dir with 1 MiB commit-log files (edit
// changes the configuration first) and shuts it down when t ends; a test
// may shut it down earlier.
func Open(t testing.TB, dir string, edit func(*store.Config)) *store.Store {
	t.Helper()
	cfg := store.DefaultConfig()
	cfg.StorePathRootDir = dir
	cfg.MappedFileSizeCommitLog = 1 << 20
	if edit != nil {
		edit(&cfg)
	}
	st, err := store.Open(cfg, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Shutdown(context.Background()) })
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	return st
}

// Records are the messages of topic-queueID, from its first (at most 64).
func Records(t testing.TB, st *store.Store, topic string, queueID int32) []message.Record {
	t.Helper()
	var out []message.Record
	for _, e := range st.ReadQueue(topic, queueID, 0, 64) {
		rec, err := st.RecordAt(e.PhyOffset, e.Size)
		if err != nil {
			t.Fatal(err)
		}
		r, _, err := message.DecodeRecord(rec)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, r)
	}
	return out
}

// WaitRecords waits until topic-queueID holds n messages (dispatch runs
// behind the append) and returns them.
func WaitRecords(t testing.TB, st *store.Store, topic string, queueID int32, n int) []message.Record {
	t.Helper()
	testutil.WaitFor(t, 10*time.Second, func() bool { return st.MaxOffset(topic, queueID) >= int64(n) })
	return Records(t, st, topic, queueID)
}
