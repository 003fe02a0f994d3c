package store

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

func TestSafeName(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		ok   bool
	}{
		{"TopicA", true},
		{"%RETRY%group-1_x|y", true},
		{strings.Repeat("a", MaxTopicLen), true},
		{strings.Repeat("a", MaxTopicLen+1), false},
		{"", false},
		{".", false},
		{"..", false},
		{"../x", false},
		{"a/b", false},
		{"a.b", false},
		{"a\x00b", false},
		{"a b", false},
		{"é", false},
	} {
		if got := SafeName(tc.name); got != tc.ok {
			t.Errorf("SafeName(%q) = %v, want %v", tc.name, got, tc.ok)
		}
	}
	if _, err := storePath("/r", "ok", ".."); !errors.Is(err, ErrBadTopic) {
		t.Errorf("storePath with ..: %v", err)
	}
	if p, err := storePath("/r", "a", "0"); err != nil || p != "/r/a/0" {
		t.Errorf("storePath: %q %v", p, err)
	}
}

// outsideEntries lists what exists next to the store root: nothing a
// topic names may appear there.
func outsideEntries(t *testing.T, parent string) []string {
	t.Helper()
	ents, err := os.ReadDir(parent)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

// TestPutRefusesUnsafeTopics: Put and PutBatch refuse topics and queue ids
// that cannot name a consume queue directory; a long retry-style topic
// that can is stored, dispatched and recovered.
func TestPutRefusesUnsafeTopics(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	cfg := testConfig(filepath.Join(parent, "store"))
	s := openStarted(t, cfg)
	for _, tc := range []struct {
		topic string
		qid   int32
		want  error
	}{
		{"../../x", 0, ErrBadTopic},
		{"..", 0, ErrBadTopic},
		{"a/b", 0, ErrBadTopic},
		{"a.b", 0, ErrBadTopic},
		{"a\x00b", 0, ErrBadTopic},
		{strings.Repeat("a", MaxTopicLen+1), 0, ErrTopicTooLong},
		{"", 0, ErrTopicTooLong},
		{"Fine", -1, ErrBadQueueID},
	} {
		if _, err := s.Put(testMsg(tc.topic, tc.qid, 0)); !errors.Is(err, tc.want) {
			t.Errorf("Put %q/%d: %v, want %v", tc.topic, tc.qid, err, tc.want)
		}
		batch := []PutMessage{*testMsg(tc.topic, tc.qid, 0), *testMsg(tc.topic, tc.qid, 1)}
		if _, err := s.PutBatch(batch, nil); !errors.Is(err, tc.want) {
			t.Errorf("PutBatch %q/%d: %v, want %v", tc.topic, tc.qid, err, tc.want)
		}
	}
	if s.MaxPhyOffset() != 0 {
		t.Fatalf("refused messages reached the commit log: %d bytes", s.MaxPhyOffset())
	}
	long := "%RETRY%" + strings.Repeat("g", 200) // a retry topic above 127
	putN(t, s, long, 2, 0, 10)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	checkQueues(t, s, long, 2, 10)
	shutdown(t, s)
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	checkQueues(t, s, long, 2, 10)
	if got := outsideEntries(t, parent); !slices.Equal(got, []string{"store"}) {
		t.Fatalf("entries beside the store: %v", got)
	}
}

// TestDispatchSkipsUnsafeRecord: a record whose topic cannot name a
// directory (as an older version could write) is skipped by dispatch and
// by recovery's re-dispatch, with no directory made for it; records after
// it are dispatched.
func TestDispatchSkipsUnsafeRecord(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	cfg := testConfig(filepath.Join(parent, "store"))
	s := openStarted(t, cfg)
	// Pretend the queue was seen before, as an older version's table would.
	s.mu.Lock()
	s.queueOffsets[queueKey{"../../evil", 0}] = 0
	s.mu.Unlock()
	if _, err := s.Put(testMsg("../../evil", 0, 0)); err != nil {
		t.Fatal(err)
	}
	putN(t, s, "Good", 1, 0, 3)
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	checkQueues(t, s, "Good", 1, 3)
	s.crashClose() // recovery re-dispatches everything
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	checkQueues(t, s, "Good", 1, 3)
	if _, ok := s.Topics()["../../evil"]; ok {
		t.Fatal("queue made for an unsafe topic")
	}
	if got := outsideEntries(t, parent); !slices.Equal(got, []string{"store"}) {
		t.Fatalf("entries beside the store: %v", got)
	}
}

// TestRecoveryIgnoresForeignEntries: files, links and names that no topic
// or queue id can have under consumequeue/ are left alone; DeleteTopic
// refuses names that would leave the store.
func TestRecoveryIgnoresForeignEntries(t *testing.T) {
	t.Parallel()
	parent := t.TempDir()
	cfg := testConfig(filepath.Join(parent, "store"))
	s := openStarted(t, cfg)
	putN(t, s, "T", 1, 0, 3)
	shutdown(t, s)

	victim := filepath.Join(parent, "victim")
	cqRoot := filepath.Join(cfg.StorePathRootDir, "consumequeue")
	for _, d := range []string{victim + "/0", cqRoot + "/a.b/0", cqRoot + "/T/+1", cqRoot + "/T/007", cqRoot + "/T/-1"} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	entry := filepath.Join(victim, "0", fileName(0))
	if err := os.WriteFile(entry, make([]byte, cfg.MappedFileSizeConsumeQueue), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, filepath.Join(cqRoot, "link")); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(cqRoot, "stray"), []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	s = openStarted(t, cfg)
	defer shutdown(t, s)
	if got := s.Topics(); len(got) != 1 || !slices.Equal(got["T"], []int32{0}) {
		t.Fatalf("topics %v", got)
	}
	checkQueues(t, s, "T", 1, 3)
	for _, topic := range []string{"..", "../victim", "a.b", ""} {
		if err := s.DeleteTopic(topic); !errors.Is(err, ErrBadTopic) {
			t.Errorf("DeleteTopic(%q): %v", topic, err)
		}
	}
	// A link named like a topic is removed, not followed.
	if err := s.DeleteTopic("link"); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(entry); err != nil {
		t.Fatalf("file behind the link: %v", err)
	}
	if _, err := os.Stat(cfg.StorePathRootDir); err != nil {
		t.Fatal(err)
	}
}

// FuzzStorePath: whatever the elements, storePath either refuses them or
// returns a path strictly below the root.
func FuzzStorePath(f *testing.F) {
	for _, s := range []string{"T", "..", "../x", "a/b", "%RETRY%g", "a\x00", ".", "", strings.Repeat("z", 300)} {
		f.Add(s, "0")
	}
	f.Fuzz(func(t *testing.T, topic, queue string) {
		const root = "/store/consumequeue"
		p, err := storePath(root, topic, queue)
		if err != nil {
			if !errors.Is(err, ErrBadTopic) {
				t.Fatalf("error %v", err)
			}
			return
		}
		rel, err := filepath.Rel(root, p)
		if err != nil || rel == "." || strings.HasPrefix(rel, "..") || filepath.Clean(p) != p ||
			strings.Count(rel, "/") != 1 {
			t.Fatalf("storePath(%q, %q) = %q outside or not two elements below %s", topic, queue, p, root)
		}
	})
}
