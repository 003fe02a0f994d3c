package compattest

// Store-level scenarios: QUERY_MESSAGE (12) against the index, and a store
// directory written by the Apache 5.3.1 broker opened by rocketgo.

import (
	"archive/tar"
	"bufio"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/consumer"
	"github.com/apache/rocketmq-client-go/v2/primitive"
)

const (
	codeQueryMessage  = 12
	codeQueryNotFound = 22
)

// startBrokerWith restarts c's broker (stopped) with extra broker.conf lines
// appended (later keys win) and waits until it is registered.
func startBrokerWith(t *testing.T, c *cluster, extra string) {
	t.Helper()
	conf := filepath.Join(c.dir, "broker.properties")
	if err := os.WriteFile(conf, []byte(c.brokerConf()+extra), 0o644); err != nil {
		t.Fatal(err)
	}
	c.starts++
	var err error
	c.broker, err = startProc(fmt.Sprintf("mqbroker#%d", c.starts), filepath.Join(binDir, "mqbroker"),
		[]string{"-n", c.nsAddr, "-c", conf}, filepath.Join(c.dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.broker, c.brokerAddr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	if !waitFor(t, readyTimeout, func() bool {
		code, route, _, err := queryRoute(c.nsAddr, "TBW102")
		return err == nil && code == 0 && route.hasBroker(c.brokerAddr)
	}) {
		t.Fatalf("broker not registered within %s", readyTimeout)
	}
}

type queryResult struct {
	code    int
	remark  string
	ext     map[string]string
	records []*primitive.MessageExt
}

// queryMessage sends QUERY_MESSAGE (12) as the Java admin does, on a new
// connection.
func queryMessage(addr, topic, key string, maxNum int, begin, end int64, uniqKey bool) (*queryResult, error) {
	conn, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		return nil, err
	}
	defer conn.Close()
	return queryMessageOn(conn, topic, key, maxNum, begin, end, uniqKey)
}

// queryMessageOn is queryMessage on an open connection.
func queryMessageOn(conn net.Conn, topic, key string, maxNum int, begin, end int64, uniqKey bool) (*queryResult, error) {
	ext := map[string]string{
		"topic": topic, "key": key, "maxNum": strconv.Itoa(maxNum),
		"beginTimestamp": strconv.FormatInt(begin, 10), "endTimestamp": strconv.FormatInt(end, 10),
	}
	if uniqKey {
		ext["_UNIQUE_KEY_QUERY"] = "true"
	}
	resp, err := invokeOn(conn, newRequest(codeQueryMessage, ext, nil), 5*time.Second)
	if err != nil {
		return nil, err
	}
	r := &queryResult{code: resp.Code, remark: resp.Remark, ext: resp.ExtFields}
	if resp.Code == 0 {
		r.records = primitive.DecodeMessage(resp.Body)
	}
	return r, nil
}

func TestQueryMessage(t *testing.T) {
	start := time.Now()
	c := sharedCluster(t)
	topic := uniq("QueryTopic")
	createTopic(t, c, topic)
	p := newProducer(t, c)
	const n = 20
	uniqIDs := make([]string, n)
	for i := 0; i < n; i++ {
		m := newMsg(topic, fmt.Sprintf("q-%d", i), "TagQ")
		m.WithKeys([]string{fmt.Sprintf("order-%d", i), "batch-" + strconv.Itoa(i%2)})
		uniqIDs[i] = p.mustSend(t, m).MsgID
	}
	now := time.Now().UnixMilli()
	found := 0
	for i := 0; i < n; i++ {
		var r *queryResult
		// The index is built by the dispatcher behind the append.
		waitFor(t, 5*time.Second, func() bool {
			var err error
			r, err = queryMessage(c.brokerAddr, topic, fmt.Sprintf("order-%d", i), 32, 0, now+1000, false)
			return err == nil && r.code == 0
		})
		if r == nil || r.code != 0 {
			t.Fatalf("query order-%d: %+v", i, r)
		}
		if r.ext["indexLastUpdateTimestamp"] == "" || r.ext["indexLastUpdatePhyoffset"] == "" {
			t.Errorf("query order-%d: response headers %v", i, r.ext)
		}
		ok := false
		for _, m := range r.records {
			ok = ok || (string(m.Body) == fmt.Sprintf("body-q-%d", i) && m.GetKeys() == fmt.Sprintf("order-%d batch-%d", i, i%2))
		}
		if !ok {
			t.Fatalf("query order-%d: %d records, none is the message", i, len(r.records))
		}
		u, err := queryMessage(c.brokerAddr, topic, uniqIDs[i], 1, 0, now+1000, true)
		if err != nil || u.code != 0 || len(u.records) == 0 || u.records[0].MsgId != uniqIDs[i] {
			t.Fatalf("query by unique key %s: %+v %v", uniqIDs[i], u, err)
		}
		found++
	}
	r, err := queryMessage(c.brokerAddr, topic, "batch-1", 64, 0, now+1000, false)
	if err != nil || r.code != 0 || len(r.records) != n/2 {
		t.Fatalf("query batch-1: %+v %v", r, err)
	}
	r, err = queryMessage(c.brokerAddr, topic, "no-such-key", 32, 0, now+1000, false)
	if err != nil || r.code != codeQueryNotFound {
		t.Fatalf("query of a missing key: %+v %v", r, err)
	}
	r, err = queryMessage(c.brokerAddr, topic, "order-1", 32, 0, 1000, false)
	if err != nil || r.code != codeQueryNotFound {
		t.Fatalf("query outside the time range: %+v %v", r, err)
	}
	report(t, start, n, found, "")
}

// fixtureMsg is a line of store/testdata/apache/manifest.txt.
type fixtureMsg struct {
	phase int
	topic string
	uniq  string
	keys  []string
}

func readFixture(t *testing.T) (dir string, msgs []fixtureMsg) {
	t.Helper()
	root := filepath.Join("..", "store", "testdata", "apache")
	f, err := os.Open(filepath.Join(root, "manifest.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		p := strings.Fields(sc.Text())
		ph, _ := strconv.Atoi(p[0])
		msgs = append(msgs, fixtureMsg{phase: ph, topic: p[1], uniq: p[4], keys: strings.Split(p[8], ",")})
	}
	dir = filepath.Join(workDir, "apache-store-"+strconv.FormatInt(time.Now().UnixNano(), 36))
	tf, err := os.Open(filepath.Join(root, "store.tar.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer tf.Close()
	gz, err := gzip.NewReader(tf)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, filepath.Clean("/"+h.Name))
		if h.Typeflag == tar.TypeDir {
			err = os.MkdirAll(path, 0o755)
		} else if h.Typeflag == tar.TypeReg {
			var b []byte
			if b, err = io.ReadAll(tr); err == nil {
				err = os.WriteFile(path, b, 0o644)
			}
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	return dir, msgs
}

// TestOpenApacheStore starts rocketgo on a store directory written by the
// Apache 5.3.1 broker: topics, consumer offsets, messages and index are
// there, and the official Go client consumes from the committed offsets.
func TestOpenApacheStore(t *testing.T) {
	start := time.Now()
	storeDir, msgs := readFixture(t)
	c := newCluster(t, "apache-store")
	c.stopBroker()
	startBrokerWith(t, c, fmt.Sprintf(`storePathRootDir=%s
mappedFileSizeCommitLog=65536
mappedFileSizeConsumeQueue=1000
maxHashSlotNum=64
maxIndexNum=100
`, storeDir))
	waitRoute(t, c, "FixtureTopic", 4)

	// FixtureGroup committed offsets past phase 1 in Apache: it gets phase 2 only.
	var mu sync.Mutex
	got := map[string]int{}
	handler := func(_ context.Context, ms ...*primitive.MessageExt) (consumer.ConsumeResult, error) {
		mu.Lock()
		defer mu.Unlock()
		for _, m := range ms {
			got[m.Topic+"/"+m.MsgId]++
		}
		return consumer.ConsumeSuccess, nil
	}
	var want, unwanted []string
	for _, m := range msgs {
		if m.topic == "FixtureTopic" && m.phase == 1 {
			unwanted = append(unwanted, m.topic+"/"+m.uniq)
		} else {
			want = append(want, m.topic+"/"+m.uniq)
		}
	}
	for _, sub := range []struct{ group, topic string }{{"FixtureGroup", "FixtureTopic"}, {uniq("CG_fixture"), "FixtureOther"}} {
		pc, err := consumer.NewPushConsumer(consumer.WithNsResolver(resolver(c)), consumer.WithGroupName(sub.group),
			consumer.WithInstance(uniq("cons")), consumer.WithConsumeFromWhere(consumer.ConsumeFromFirstOffset))
		if err != nil {
			t.Fatal(err)
		}
		if err := pc.Subscribe(sub.topic, consumer.MessageSelector{}, handler); err != nil {
			t.Fatal(err)
		}
		if err := pc.Start(); err != nil {
			t.Fatal(err)
		}
		defer pc.Shutdown()
	}
	ok := waitFor(t, 30*time.Second, func() bool {
		mu.Lock()
		defer mu.Unlock()
		for _, k := range want {
			if got[k] == 0 {
				return false
			}
		}
		return true
	})
	mu.Lock()
	n := len(got)
	for _, k := range unwanted {
		if got[k] > 0 {
			t.Errorf("%s consumed again: Apache's committed offset ignored", k)
		}
	}
	mu.Unlock()
	if !ok {
		t.Fatalf("got %d of %d messages from the Apache store", n, len(want))
	}
	// Apache's index files answer QUERY_MESSAGE.
	for _, m := range msgs[:10] {
		r, err := queryMessage(c.brokerAddr, m.topic, m.keys[0], 32, 0, time.Now().UnixMilli(), false)
		if err != nil || r.code != 0 || len(r.records) == 0 {
			t.Fatalf("query %s in the Apache index: %+v %v", m.keys[0], r, err)
		}
	}
	report(t, start, len(want), n, "apache-5.3.1-store")
}
