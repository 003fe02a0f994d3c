package compattest

// What a client gets for hostile trace messages, compared with Apache: a
// body that is no trace data at all, records cut short, a body past the
// broker's maxMessageSize, a KEYS property longer than a frame's property
// section allows. The broker stores trace messages as any other (it never
// decodes them): the answers, the stored bytes and what queryMsgTraceById
// makes of them must be Apache's.

import (
	"bytes"
	"math"
	"math/rand"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// hostileTrace is one hostile trace message: its body and its keys.
type hostileTrace struct {
	name string
	body func(key string) []byte
	keys func(key string) string
}

func hostileTraces() []hostileTrace {
	garbage := make([]byte, 4096)
	rand.New(rand.NewSource(18)).Read(garbage)
	same := func(key string) string { return key }
	return []hostileTrace{
		{"garbage", func(string) []byte { return garbage }, same},
		{"short records", func(key string) []byte {
			return []byte("Pub\x01x\x02SubBefore\x02SubAfter\x01\x01" + key + "\x02\x02\x01\x01Pub")
		}, same},
		{"unknown type", func(key string) []byte {
			return []byte("Recall2\x011\x01r\x01g\x01t\x01" + key + "\x01true\x02")
		}, same},
		{"over maxMessageSize", func(key string) []byte {
			return bytes.Repeat([]byte("Pub\x01"+key+"\x02"), 4*1024*1024/(len(key)+5)+1)
		}, same},
		{"keys past the property limit", func(key string) []byte {
			return []byte("Pub\x011\x01r\x01g\x01t\x01" + key + "\x02")
		}, func(key string) string { return key + strings.Repeat(" k", 20000) }},
	}
}

// hostileTraceSend sends one hostile trace message to topic on tg as the
// Java client's trace producer does (TBW102 as its template).
func hostileTraceSend(tg target, topic string, h hostileTrace, key string) (*rawCmd, error) {
	req := javaRequest(310, map[string]string{
		"a": "hostile-trace-pg", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": "0",
		"g": strconv.FormatInt(time.Now().UnixMilli(), 10), "h": "0",
		"i": "KEYS\x01" + h.keys(key) + "\x02UNIQ_KEY\x01" + strings.Repeat("AB", 16),
		"j": "0", "k": "false", "m": "false",
	}, h.body(key))
	return rawInvoke(tg.brokerAddr, req, 10*time.Second)
}

// testTraceHostile runs the hostile trace messages on both targets.
func testTraceHostile(t *testing.T, targets []target, ja *javaAdmin) {
	run := strconv.FormatInt(time.Now().UnixNano()%1_000_000, 10)
	got := map[string]map[string]string{} // case → target → what was seen
	for _, tg := range targets {
		for i, h := range hostileTraces() {
			key := "hostile-" + run + "-" + strconv.Itoa(i)
			resp, err := hostileTraceSend(tg, defaultTraceTopic, h, key)
			var seen string
			switch {
			case err != nil:
				seen = "connection: " + err.Error()
			default:
				seen = "code " + strconv.Itoa(resp.Code) + " remark " + strings.ReplaceAll(resp.Remark, tg.brokerAddr, "<broker>")
			}
			if err == nil && resp.Code == 0 {
				seen += "\nstored: " + hostileStored(t, tg, key, h.body(key))
				out := ja.run(t, []string{"queryMsgTraceById", "-n", tg.nsAddr, "-i", key})
				seen += "\nqueryMsgTraceById:\n" + firstLines(out, 3)
			}
			if got[h.name] == nil {
				got[h.name] = map[string]string{}
			}
			got[h.name][tg.name] = strings.ReplaceAll(seen, key, "<key>")
			// The broker is still there and serves the next request.
			if _, err := rawInvoke(tg.brokerAddr, javaRequest(105, map[string]string{"topic": defaultTraceTopic}, nil), 5*time.Second); err != nil {
				t.Fatalf("%s: broker gone after %s: %v", tg.name, h.name, err)
			}
		}
	}
	for _, h := range hostileTraces() {
		a, b := got[h.name][targets[0].name], got[h.name][targets[1].name]
		if a != b {
			t.Errorf("hostile trace %q:\nrocketgo: %s\napache:   %s", h.name, a, b)
		} else {
			t.Logf("hostile trace %q: %s", h.name, firstLines(a, 2))
		}
	}
}

// hostileStored reads the message back by its key (QUERY_MESSAGE, as
// queryMsgTraceById does) and says whether its body is the one sent.
func hostileStored(t *testing.T, tg target, key string, body []byte) string {
	t.Helper()
	var found []*primitive.MessageExt
	waitFor(t, 10*time.Second, func() bool {
		resp, err := rawInvoke(tg.brokerAddr, javaRequest(12, map[string]string{"topic": defaultTraceTopic, "key": key,
			"maxNum": "32", "beginTimestamp": "0", "endTimestamp": strconv.FormatInt(math.MaxInt64, 10)}, nil), 5*time.Second)
		if err != nil || resp.Code != 0 {
			return false
		}
		found = primitive.DecodeMessage(resp.Body)
		return len(found) > 0
	})
	switch {
	case len(found) == 0:
		return "not found by key"
	case !bytes.Equal(found[0].Body, body):
		return "body differs from the one sent"
	}
	return "body as sent"
}

func firstLines(s string, n int) string {
	ls := strings.Split(s, "\n")
	if len(ls) > n {
		ls = ls[:n]
	}
	return strings.Join(ls, "\n")
}
