package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/remoting"
)

// TestFormats: TopicConfig.toString, PermName.perm2String and
// AttributeParser.parseToMap as Apache's tools print and parse them.
func TestFormats(t *testing.T) {
	attrs, err := parseAttributes("+message.type=FIFO,+b=2")
	if err != nil {
		t.Fatal(err)
	}
	tc := &topicConfig{name: "T", read: 4, write: 8, perm: 6, sysFlag: 2, order: true, attributes: attrs}
	want := "TopicConfig [topicName=T, readQueueNums=4, writeQueueNums=8, perm=RW-, topicFilterType=SINGLE_TAG, topicSysFlag=2, order=true, attributes={+b=2, +message.type=FIFO}]"
	if got := tc.String(); got != want {
		t.Fatalf("toString:\n%s\nwant\n%s", got, want)
	}
	for perm, want := range map[int]string{0: "---", 2: "-W-", 4: "R--", 7: "RWX"} {
		if got := permString(perm); got != want {
			t.Errorf("perm %d: %s, want %s", perm, got, want)
		}
	}
	for _, bad := range []string{"a=1", "+a", "+=1", "-a=1"} {
		if _, err := parseAttributes(bad); err == nil {
			t.Errorf("attributes %q accepted", bad)
		}
	}
	if p := parseProperties("a=1\nb=x=y\n\n#c=3\n"); len(p) != 2 || p["b"] != "x=y" {
		t.Fatalf("properties %v", p)
	}
}

// TestRouteJSON: TopicRouteData.toJson(true) as Apache's 5.5.0 tool printed
// it for a one-master route, here with a slave too.
func TestRouteJSON(t *testing.T) {
	body := `{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:26263",1:"127.0.0.1:26264"},"brokerName":"b","cluster":"C"}],` +
		`"queueDatas":[{"brokerName":"b","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`
	var r adminclient.Route
	if err := json.Unmarshal(remoting.QuoteIntKeys([]byte(body)), &r); err != nil {
		t.Fatal(err)
	}
	want := "{\n\t\"brokerDatas\":[\n\t\t{\n\t\t\t\"brokerAddrs\":{\n\t\t\t\t0:\"127.0.0.1:26263\",\n\t\t\t\t1:\"127.0.0.1:26264\"\n\t\t\t},\n" +
		"\t\t\t\"brokerName\":\"b\",\n\t\t\t\"cluster\":\"C\",\n\t\t\t\"enableActingMaster\":false\n\t\t}\n\t],\n" +
		"\t\"filterServerTable\":{},\n\t\"queueDatas\":[\n\t\t{\n\t\t\t\"brokerName\":\"b\",\n\t\t\t\"perm\":6,\n" +
		"\t\t\t\"readQueueNums\":4,\n\t\t\t\"topicSysFlag\":0,\n\t\t\t\"writeQueueNums\":4\n\t\t}\n\t]\n}"
	if got := routeJSON(&r); got != want {
		t.Fatalf("got\n%s\nwant\n%s", got, want)
	}
}

// TestParseResetTime: resetOffsetByTime's -s forms.
func TestParseResetTime(t *testing.T) {
	now := time.UnixMilli(1700000000123)
	for s, want := range map[string]int64{
		"now":                     now.UnixMilli(),
		"42":                      42,
		"2026-12-01#10:20:30:456": time.Date(2026, 12, 1, 10, 20, 30, 456e6, time.Local).UnixMilli(),
	} {
		if got, err := parseResetTime(s, now); err != nil || got != want {
			t.Errorf("%q: %d %v, want %d", s, got, err, want)
		}
	}
	for _, bad := range []string{"", "yesterday", "2026-12-01#10:20:30", "2026-12-01#10:20:30:4567", "2026-13-01#10:20:30:000"} {
		if _, err := parseResetTime(bad, now); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

// TestJavaHashOrder: the key orders java.util.HashMap (JDK 17) printed for
// these insertions, a 128-slot map as MessageDecoder's and a default one
// that grows twice.
func TestJavaHashOrder(t *testing.T) {
	check := func(keys []string, initialCap int, want string) {
		t.Helper()
		props := make([]adminclient.Property, len(keys))
		for i, k := range keys {
			props[i] = adminclient.Property{Name: k, Value: "v"}
		}
		var got []string
		for _, p := range javaHashOrder(props, initialCap) {
			got = append(got, p.Name)
		}
		if s := "[" + strings.Join(got, ", ") + "]"; s != want {
			t.Errorf("got  %s\nwant %s", s, want)
		}
	}
	check([]string{"compat_id", "KEYS", "UNIQ_KEY", "CLUSTER", "TAGS", "WAIT", "MIN_OFFSET", "MAX_OFFSET", "TRAN_MSG", "__CRC32#", "DELAY"}, 128,
		"[UNIQ_KEY, CLUSTER, __CRC32#, MIN_OFFSET, compat_id, DELAY, TAGS, TRAN_MSG, KEYS, WAIT, MAX_OFFSET]")
	var ks []string
	for i := 0; i < 20; i++ {
		ks = append(ks, fmt.Sprintf("k%d", i))
	}
	check(ks, 16, "[k0, k1, k2, k3, k4, k5, k11, k6, k10, k7, k13, k8, k12, k9, k15, k14, k17, k16, k19, k18]")
}
