package store

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
)

// apacheMsg is one line of testdata/apache/manifest.txt, written by the
// Apache 5.3.1 broker's client in testdata/apache/gen.sh.
type apacheMsg struct {
	phase       int
	topic       string
	queueID     int32
	queueOffset int64
	uniqKey     string
	offsetMsgID string
	tags        string
	bodyLen     int
	keys        []string
}

func readApacheManifest(t *testing.T) []apacheMsg {
	t.Helper()
	f, err := os.Open("testdata/apache/manifest.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []apacheMsg
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Fields(sc.Text())
		if len(p) != 9 {
			t.Fatalf("manifest line %q", sc.Text())
		}
		m := apacheMsg{topic: p[1], uniqKey: p[4], offsetMsgID: p[5], tags: p[6], keys: strings.Split(p[8], ",")}
		m.phase, _ = strconv.Atoi(p[0])
		q, _ := strconv.Atoi(p[2])
		m.queueID = int32(q)
		m.queueOffset, _ = strconv.ParseInt(p[3], 10, 64)
		m.bodyLen, _ = strconv.Atoi(p[7])
		out = append(out, m)
	}
	return out
}

// extractApacheStore unpacks testdata/apache/store.tar.gz into dir.
func extractApacheStore(t *testing.T, dir string) {
	t.Helper()
	f, err := os.Open("testdata/apache/store.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		switch h.Typeflag {
		case tar.TypeDir:
			err = os.MkdirAll(path, 0o755)
		case tar.TypeReg:
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(path, b, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
}

// apacheConfig matches the sizes gen/Gen.java gave the Apache broker.
func apacheConfig(dir string) Config {
	cfg := testConfig(dir)
	cfg.MappedFileSizeCommitLog = 64 * 1024
	cfg.MappedFileSizeConsumeQueue = 50 * cqEntrySize
	cfg.MaxHashSlotNum = 64
	cfg.MaxIndexNum = 100
	return cfg
}

func TestOpenApacheStore(t *testing.T) {
	dir := t.TempDir()
	extractApacheStore(t, dir)
	msgs := readApacheManifest(t)
	s := openStarted(t, apacheConfig(dir))
	if s.MinPhyOffset() != 0 || s.MaxPhyOffset() <= 64*1024 {
		t.Fatalf("commit log [%d, %d): want two files", s.MinPhyOffset(), s.MaxPhyOffset())
	}
	compressed := 0
	for _, m := range msgs {
		res := s.GetMessages(nil, m.topic, m.queueID, m.queueOffset, 1, 1<<20, nil)
		if res.Status != Found || res.Count != 1 {
			t.Fatalf("%s-%d@%d: %v", m.topic, m.queueID, m.queueOffset, res.Status)
		}
		r, _, err := message.DecodeRecord(res.Body)
		if err != nil {
			t.Fatal(err)
		}
		_, phy, err := message.DecodeOffsetMsgID(m.offsetMsgID)
		if err != nil || phy != r.PhysicalOffset {
			t.Fatalf("%s: offset id %s, record at %d (%v)", m.uniqKey, m.offsetMsgID, r.PhysicalOffset, err)
		}
		if message.Property(r.Properties, message.PropUniqClientMessageID) != m.uniqKey ||
			message.Property(r.Properties, message.PropTags) != m.tags ||
			message.Property(r.Properties, message.PropKeys) != strings.Join(m.keys, " ") {
			t.Fatalf("%s: properties %q", m.uniqKey, r.Properties)
		}
		if r.SysFlag&message.FlagCompressed != 0 {
			compressed++
		} else if len(r.Body) != m.bodyLen {
			t.Fatalf("%s: body %d bytes, want %d", m.uniqKey, len(r.Body), m.bodyLen)
		}
		// Apache's index files answer by key and by unique key.
		for _, key := range append([]string{m.uniqKey}, m.keys...) {
			q := s.QueryMessage(nil, m.topic, key, 64, 0, math.MaxInt64)
			found := false
			for b := q.Body; len(b) > 0; {
				qr, rest, err := message.DecodeRecord(b)
				if err != nil {
					t.Fatal(err)
				}
				found = found || qr.PhysicalOffset == phy
				b = rest
			}
			if !found {
				t.Fatalf("query %s#%s: record %d not among %d", m.topic, key, phy, q.Count)
			}
		}
	}
	if compressed == 0 {
		t.Fatal("fixture has no compressed body")
	}
	for _, topic := range []string{"FixtureTopic", "FixtureOther"} {
		var want int64
		for _, m := range msgs {
			if m.topic == topic {
				want++
			}
		}
		var got int64
		for q := int32(0); q < 4; q++ {
			got += s.MaxOffset(topic, q)
		}
		if got != want {
			t.Fatalf("%s: %d entries, want %d", topic, got, want)
		}
	}
	// Appends continue Apache's queues and index.
	m := keyedMsg("FixtureTopic", 999)
	m.QueueID = 0
	r, err := s.Put(m)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5e9, func() bool { return s.DispatchedPhyOffset() == s.MaxPhyOffset() })
	if q := s.QueryMessage(nil, "FixtureTopic", "k999", 4, 0, math.MaxInt64); q.Count != 1 {
		t.Fatalf("new record not indexed: %d", q.Count)
	}
	if r.QueueOffset != s.MaxOffset("FixtureTopic", 0)-1 {
		t.Fatalf("queue offset %d, max %d", r.QueueOffset, s.MaxOffset("FixtureTopic", 0))
	}
	shutdown(t, s)

	// And it reopens after rocketgo's own clean shutdown.
	s = openStarted(t, apacheConfig(dir))
	defer shutdown(t, s)
	if s.MaxPhyOffset() != r.PhysicalOffset+int64(r.WroteBytes) {
		t.Fatalf("max phy %d after reopen", s.MaxPhyOffset())
	}
}
