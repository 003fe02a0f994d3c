package store

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

func lmqConfig(dir string) Config {
	cfg := testConfig(dir)
	cfg.EnableLmq = true
	cfg.EnableMultiDispatch = true
	return cfg
}

// lmqMsg is testMsg i to topic/queue with INNER_MULTI_DISPATCH = lmqs.
func lmqMsg(topic string, qid int32, i int, lmqs string) *PutMessage {
	m := testMsg(topic, qid, i)
	m.Properties += message.PropInnerMultiDispatch + "\x01" + lmqs + "\x02"
	return m
}

func putLMQ(t testing.TB, s *Store, topic string, qid int32, i int, lmqs string) PutResult {
	t.Helper()
	r, err := s.Put(lmqMsg(topic, qid, i, lmqs))
	if err != nil {
		t.Fatalf("put %d (%q): %v", i, lmqs, err)
	}
	return r
}

func waitAllDispatched(t testing.TB, s *Store) {
	t.Helper()
	testutil.WaitFor(t, 5*time.Second, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
}

// checkLMQ verifies that the LMQ holds the messages i of want, in order,
// each at the LMQ offset its record's INNER_MULTI_QUEUE_OFFSET names.
func checkLMQ(t testing.TB, s *Store, lmq string, want []int) {
	t.Helper()
	recs := readAll(t, s, lmq, 0)
	if len(recs) != len(want) || s.MaxOffset(lmq, 0) != int64(len(want)) {
		t.Fatalf("%s: %d records, max offset %d, want %d", lmq, len(recs), s.MaxOffset(lmq, 0), len(want))
	}
	for k, r := range recs {
		if r.Flag != int32(want[k]) {
			t.Fatalf("%s offset %d: message %d, want %d", lmq, k, r.Flag, want[k])
		}
		names := strings.Split(message.Property(r.Properties, message.PropInnerMultiDispatch), ",")
		offs := strings.Split(message.Property(r.Properties, message.PropInnerMultiQueueOffset), ",")
		if len(names) != len(offs) {
			t.Fatalf("%s offset %d: names %q offsets %q", lmq, k, names, offs)
		}
		found := false
		for j, n := range names {
			if n == lmq {
				found = offs[j] == fmt.Sprint(k)
			}
		}
		if !found {
			t.Fatalf("%s offset %d: record says %q / %q", lmq, k, names, offs)
		}
	}
}

func TestLMQMultiDispatch(t *testing.T) {
	t.Parallel()
	s := openStarted(t, lmqConfig(t.TempDir()))
	defer shutdown(t, s)
	var mu sync.Mutex
	woken := map[string]int64{}
	s.OnDispatch(func(topic string, queueID int32, max int64) {
		mu.Lock()
		woken[fmt.Sprintf("%s/%d", topic, queueID)] = max
		mu.Unlock()
	})
	a, b := "%LMQ%$P$a", "%LMQ%$P$b"
	var res []PutResult
	var inA, inB []int
	for i := range 30 {
		lmqs := a
		switch i % 3 {
		case 1:
			lmqs = b
		case 2:
			lmqs = a + "," + b
		}
		res = append(res, putLMQ(t, s, "P", int32(i%2), i, lmqs))
		if i%3 != 1 {
			inA = append(inA, i)
		}
		if i%3 != 0 {
			inB = append(inB, i)
		}
	}
	waitAllDispatched(t, s)
	checkQueues(t, s, "P", 2, 30) // the parent's queues as ever
	checkLMQ(t, s, a, inA)
	checkLMQ(t, s, b, inB)
	if s.LmqNum() != 2 || !s.LmqExists(a) || !s.LmqExists(b) || s.LmqExists("%LMQ%$P$c") || s.LmqExists("P") {
		t.Fatalf("LmqNum %d, exists a %v b %v", s.LmqNum(), s.LmqExists(a), s.LmqExists(b))
	}
	if _, ok := s.Topics()[a]; ok {
		t.Fatal("an LMQ listed as a topic")
	}
	got := map[string]int64{}
	s.ForEachLMQ(func(name string, max int64) bool { got[name] = max; return true })
	if len(got) != 2 || got[a] != int64(len(inA)) || got[b] != int64(len(inB)) {
		t.Fatalf("ForEachLMQ: %v", got)
	}
	n := 0
	s.ForEachLMQ(func(string, int64) bool { n++; return false })
	if n != 1 {
		t.Fatalf("ForEachLMQ went on after false: %d", n)
	}
	mu.Lock()
	if woken[a+"/0"] != int64(len(inA)) || woken[b+"/0"] != int64(len(inB)) {
		t.Fatalf("OnDispatch: %v", woken)
	}
	mu.Unlock()
	// Reads by time and bounds work on an LMQ as on a queue.
	if s.MinOffset(a, 0) != 0 {
		t.Fatalf("min offset %d", s.MinOffset(a, 0))
	}
	last := res[inA[len(inA)-1]].StoreTimestamp
	if got := s.OffsetByTime(a, 0, last+1); got != int64(len(inA)) {
		t.Fatalf("OffsetByTime(future) = %d", got)
	}
	if got := s.OffsetByTime(a, 0, 0); got != 0 {
		t.Fatalf("OffsetByTime(0) = %d", got)
	}
	if ts, err := s.EarliestMessageTime(a, 0); err != nil || ts != res[0].StoreTimestamp {
		t.Fatalf("EarliestMessageTime = %d %v", ts, err)
	}
	if _, err := os.Stat(filepath.Join(s.cfg.StorePathRootDir, "consumequeue", a, "0")); err != nil {
		testutil.WaitFor(t, 5*time.Second, func() bool {
			_, err := os.Stat(filepath.Join(s.cfg.StorePathRootDir, "consumequeue", a, "0", fileName(0)))
			return err == nil
		})
	}
}

func TestLMQOffDoesNothing(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name             string
		lmq, multi       bool
		wantOffsetInProp bool
	}{
		{"both off", false, false, false},
		{"only enableLmq", true, false, false},
		{"only enableMultiDispatch", false, true, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			cfg := testConfig(t.TempDir())
			cfg.EnableLmq, cfg.EnableMultiDispatch = tc.lmq, tc.multi
			s := openStarted(t, cfg)
			defer shutdown(t, s)
			m := lmqMsg("P", 0, 0, "%LMQ%$P$a")
			// A client's own offsets are not honoured either.
			m.Properties += message.PropInnerMultiQueueOffset + "\x010\x02"
			putLMQ(t, s, "P", 0, 0, "%LMQ%$P$a")
			if _, err := s.Put(m); err != nil {
				t.Fatal(err)
			}
			waitAllDispatched(t, s)
			recs := readAll(t, s, "P", 0)
			if len(recs) != 2 || recs[0].Properties != lmqMsg("P", 0, 0, "%LMQ%$P$a").Properties || recs[1].Properties != m.Properties {
				t.Fatalf("records changed: %+v", recs)
			}
			if s.LmqNum() != 0 || s.MaxOffset("%LMQ%$P$a", 0) != 0 {
				t.Fatal("an LMQ was made")
			}
		})
	}
}

func TestLMQExcludedTopicsAndBatches(t *testing.T) {
	t.Parallel()
	s := openStarted(t, lmqConfig(t.TempDir()))
	defer shutdown(t, s)
	for i, topic := range []string{"%RETRY%g", "%DLQ%g", "rmq_sys_x", ScheduleTopic} {
		putLMQ(t, s, topic, 0, i, "%LMQ%$P$a")
	}
	batch := []PutMessage{*lmqMsg("P", 0, 0, "%LMQ%$P$a"), *lmqMsg("P", 0, 1, "%LMQ%$P$a")}
	if _, err := s.PutBatch(batch, nil); err != nil {
		t.Fatal(err)
	}
	waitAllDispatched(t, s)
	if s.LmqNum() != 0 {
		t.Fatalf("LmqNum %d", s.LmqNum())
	}
	for _, r := range readAll(t, s, "P", 0) {
		if message.Property(r.Properties, message.PropInnerMultiQueueOffset) != "" {
			t.Fatalf("batch record got LMQ offsets: %q", r.Properties)
		}
	}
}

func TestLMQOffsetsReplaceClientOnes(t *testing.T) {
	t.Parallel()
	s := openStarted(t, lmqConfig(t.TempDir()))
	defer shutdown(t, s)
	m := lmqMsg("P", 0, 0, "%LMQ%$P$a")
	m.Properties = message.PropInnerMultiQueueOffset + "\x01999\x02" + m.Properties
	if _, err := s.Put(m); err != nil {
		t.Fatal(err)
	}
	putLMQ(t, s, "P", 0, 1, "%LMQ%$P$a")
	waitAllDispatched(t, s)
	checkLMQ(t, s, "%LMQ%$P$a", []int{0, 1})
	r := readAll(t, s, "P", 0)[0]
	if strings.Count(r.Properties, message.PropInnerMultiQueueOffset) != 1 {
		t.Fatalf("properties %q", r.Properties)
	}
}

func TestLMQCrashRecovery(t *testing.T) {
	t.Parallel()
	cfg := lmqConfig(t.TempDir())
	s := openStarted(t, cfg)
	a, b := "%LMQ%$P$a", "%LMQ%$P$b"
	for i := range 400 { // several commit log files
		putLMQ(t, s, "P", int32(i%2), i, a+","+b)
	}
	waitAllDispatched(t, s)
	s.crashClose()
	// kill -9 before the consume queues reached the disk: rebuilt from the
	// commit log like the parent's.
	for _, d := range []string{a, "P"} {
		if err := os.RemoveAll(filepath.Join(cfg.StorePathRootDir, "consumequeue", d)); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Remove(filepath.Join(cfg.StorePathRootDir, "checkpoint")); err != nil && !errors.Is(err, os.ErrNotExist) {
		t.Fatal(err)
	}
	s = openStarted(t, cfg)
	all := make([]int, 400)
	for i := range all {
		all[i] = i
	}
	checkLMQ(t, s, a, all)
	checkLMQ(t, s, b, all)
	checkQueues(t, s, "P", 2, 400)
	if s.LmqNum() != 2 {
		t.Fatalf("LmqNum %d", s.LmqNum())
	}
	// The next offsets come from the rebuilt queues.
	putLMQ(t, s, "P", 0, 400, a)
	waitAllDispatched(t, s)
	checkLMQ(t, s, a, append(all, 400))
	shutdown(t, s)

	s = openStarted(t, cfg)
	defer shutdown(t, s)
	putLMQ(t, s, "P", 1, 401, b)
	waitAllDispatched(t, s)
	checkLMQ(t, s, a, append(all, 400))
	checkLMQ(t, s, b, append(all, 401))
}

func TestLMQReplicaDispatch(t *testing.T) {
	t.Parallel()
	m := openStarted(t, lmqConfig(t.TempDir()))
	defer shutdown(t, m)
	rcfg := lmqConfig(t.TempDir())
	rcfg.Replica = true
	r := openStarted(t, rcfg)
	defer shutdown(t, r)
	var want []int
	for i := range 300 {
		lmq := "%LMQ%$P$a"
		if i%2 == 1 {
			lmq = "%LMQ%$P$b"
		} else {
			want = append(want, i)
		}
		putLMQ(t, m, "P", 0, i, lmq)
	}
	end := copyReplica(t, m, r, 0, 997)
	sameCommitLog(t, m, r, 0, end)
	testutil.WaitFor(t, 10*time.Second, func() bool { return r.DispatchedPhyOffset() >= end })
	sameQueues(t, m, r, "%LMQ%$P$a", 1)
	sameQueues(t, m, r, "%LMQ%$P$b", 1)
	checkLMQ(t, r, "%LMQ%$P$a", want)
	if r.LmqNum() != 2 {
		t.Fatalf("replica LmqNum %d", r.LmqNum())
	}
	// Promoted, it goes on from the replicated LMQ offsets.
	if _, err := r.LeaveReplica(); err != nil {
		t.Fatal(err)
	}
	putLMQ(t, r, "P", 0, 300, "%LMQ%$P$a")
	waitAllDispatched(t, r)
	checkLMQ(t, r, "%LMQ%$P$a", append(want, 300))
}

func TestLMQDelete(t *testing.T) {
	t.Parallel()
	cfg := lmqConfig(t.TempDir())
	s := openStarted(t, cfg)
	defer shutdown(t, s)
	a := "%LMQ%$P$a"
	for i := range 5 {
		putLMQ(t, s, "P", 0, i, a+",%LMQ%$P$b")
	}
	waitAllDispatched(t, s)
	testutil.WaitFor(t, 5*time.Second, func() bool {
		_, err := os.Stat(filepath.Join(cfg.StorePathRootDir, "consumequeue", a, "0", fileName(0)))
		return err == nil
	})
	if err := s.DeleteTopic(a); err != nil {
		t.Fatal(err)
	}
	if s.LmqNum() != 1 || s.LmqExists(a) || s.MaxOffset(a, 0) != 0 {
		t.Fatalf("after delete: LmqNum %d exists %v", s.LmqNum(), s.LmqExists(a))
	}
	if _, err := os.Stat(filepath.Join(cfg.StorePathRootDir, "consumequeue", a)); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("LMQ dir: %v", err)
	}
	// A message for it after the delete starts it again at 0.
	putLMQ(t, s, "P", 0, 5, a)
	waitAllDispatched(t, s)
	checkLMQ(t, s, a, []int{5})
	if s.LmqNum() != 2 {
		t.Fatalf("LmqNum %d", s.LmqNum())
	}
}

func TestSafeNameLMQ(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"TopicTest":        true,
		"%LMQ%$P$l":        true,
		"%LMQ%$P-1$lite_2": true,
		"%LMQ%plain":       true,
		"%LMQ%$P":          false,
		"%LMQ%$P$":         false,
		"%LMQ%$$l":         false,
		"%LMQ%$P$l$x":      false,
		"%LMQ%$":           false,
		"%LMQ%$$":          false,
		"$":                false,
		"a$b$c":            false,
		"%RETRY%$P$l":      false,
		"%LMQ%$../..$x":    false,
		"%LMQ%$P$l/..":     false,
		"%LMQ%$P$.":        false,
		"%LMQ%$P$l\x00":    false,
		"..":               false,
	} {
		if got := SafeName(name); got != want {
			t.Errorf("SafeName(%q) = %v, want %v", name, got, want)
		}
	}
	if SafeName("%LMQ%$P$" + strings.Repeat("l", MaxTopicLen-7)) {
		t.Error("a name over MaxTopicLen taken")
	}
}

// TestLMQHostileNames: whatever a producer puts in INNER_MULTI_DISPATCH,
// the store neither panics, nor makes a path outside its directory, nor
// works in more than proportion to the properties' size.
func TestLMQHostileNames(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	cfg := lmqConfig(filepath.Join(root, "store"))
	s := openStarted(t, cfg)
	defer shutdown(t, s)
	many := make([]string, 3000)
	for i := range many {
		many[i] = fmt.Sprintf("%%LMQ%%$P$m%d", i)
	}
	dups := strings.TrimSuffix(strings.Repeat("%LMQ%$P$d,", 100), ",")
	tests := []struct {
		name  string
		value string
		err   error // from Put
		lmqs  map[string]int64
	}{
		{"too many names", strings.Join(many, ","), ErrPropertiesTooLarge, nil},
		{"huge name", "%LMQ%$P$" + strings.Repeat("x", 40000), ErrPropertiesTooLarge, nil},
		{"name over 255", "%LMQ%$P$" + strings.Repeat("x", 300), nil, nil},
		{"dot dot", "../../x,%LMQ%$../..$x,%LMQ%/../../x,%LMQ%$P$l/../../..", nil, nil},
		{"empty parts", ",,,%LMQ%$P$e,,", nil, map[string]int64{"%LMQ%$P$e": 1}},
		{"only commas", ",,,,", nil, nil},
		{"duplicates", dups, nil, map[string]int64{"%LMQ%$P$d": 1}},
		{"many duplicates past the map", strings.Join(many[:40], ",") + "," + strings.Join(many[:40], ","), nil,
			map[string]int64{many[0]: 1, many[39]: 1}},
		{"not LMQs", "TopicX,%RETRY%g,P", nil, nil},
		{"mixed", "TopicX,%LMQ%$P$mix,,%LMQ%$P$mix", nil, map[string]int64{"%LMQ%$P$mix": 1}},
		{"nul", "%LMQ%$P$a\x00b", nil, nil},
	}
	for i, tc := range tests {
		t0 := time.Now()
		_, err := s.Put(lmqMsg("P", 0, i, tc.value))
		if !errors.Is(err, tc.err) && !(tc.err == nil && err == nil) {
			t.Fatalf("%s: put: %v, want %v", tc.name, err, tc.err)
		}
		waitAllDispatched(t, s)
		if d := time.Since(t0); d > 2*time.Second {
			t.Fatalf("%s: took %v", tc.name, d)
		}
		for lmq, n := range tc.lmqs {
			if got := s.MaxOffset(lmq, 0); got != n {
				t.Fatalf("%s: %s max offset %d, want %d", tc.name, lmq, got, n)
			}
		}
	}
	// Nothing but the store's directory was made under root, and the
	// queues are all well-formed names.
	ents, err := os.ReadDir(root)
	if err != nil || len(ents) != 1 || ents[0].Name() != "store" {
		t.Fatalf("root holds %v (%v)", ents, err)
	}
	cqs, err := os.ReadDir(filepath.Join(cfg.StorePathRootDir, "consumequeue"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range cqs {
		if !SafeName(e.Name()) {
			t.Fatalf("consume queue dir %q", e.Name())
		}
	}
	if s.LmqNum() != 43 { // e, d, mix and 40 of many
		t.Fatalf("LmqNum %d", s.LmqNum())
	}
}

// TestLMQPropertiesRoom: a message whose properties leave no room for the
// offsets the append adds is refused before the lock, never written short.
func TestLMQPropertiesRoom(t *testing.T) {
	t.Parallel()
	s := openStarted(t, lmqConfig(t.TempDir()))
	defer shutdown(t, s)
	m := lmqMsg("P", 0, 0, "%LMQ%$P$a")
	pad := message.MaxPropertiesLen - len(m.Properties) - 10
	m.Properties = "PAD\x01" + strings.Repeat("p", pad-5) + "\x02" + m.Properties
	if _, err := s.Put(m); !errors.Is(err, ErrPropertiesTooLarge) {
		t.Fatalf("put: %v, want ErrPropertiesTooLarge", err)
	}
	m.Properties = m.Properties[40:]
	if _, err := s.Put(m); err != nil {
		t.Fatalf("put with room: %v", err)
	}
	waitAllDispatched(t, s)
	if s.MaxOffset("%LMQ%$P$a", 0) != 1 {
		t.Fatal("no LMQ entry")
	}
}

// A reader parked on an LMQ (a long-polling pull or pop of a lite topic) is
// woken when a message for it is dispatched, not by the parent's other
// messages.
func TestLMQParkWoken(t *testing.T) {
	t.Parallel()
	s := openStarted(t, lmqConfig(t.TempDir()))
	defer shutdown(t, s)
	w := newWoken()
	w.park(t, s, time.Hour, nil, Position{Topic: "%LMQ%$P$a", QueueID: 0, Offset: 0})
	putN(t, s, "P", 1, 0, 1)
	putLMQ(t, s, "P", 0, 1, "%LMQ%$P$b")
	w.none(t)
	putLMQ(t, s, "P", 0, 2, "%LMQ%$P$a")
	w.want(t, Arrived)
}
