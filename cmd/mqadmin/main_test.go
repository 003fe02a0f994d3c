package main

import (
	"encoding/json"
	"slices"
	"testing"

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

// TestClusterBrokers: a cluster's brokers by name, each master and its
// slaves by id, from the name server's answer with fastjson's bare keys.
func TestClusterBrokers(t *testing.T) {
	body := `{"brokerAddrTable":{"b":{"cluster":"C","brokerName":"b","brokerAddrs":{2:"h:3",0:"h:1",1:"h:2"}},` +
		`"a":{"cluster":"C","brokerName":"a","brokerAddrs":{1:"g:2"}}},"clusterAddrTable":{"C":["b","a"]}}`
	var ci clusterInfo
	if err := json.Unmarshal(remoting.QuoteIntKeys([]byte(body)), &ci); err != nil {
		t.Fatal(err)
	}
	bs, err := ci.brokers("C")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].name != "a" || bs[0].master != "" || bs[1].master != "h:1" || !slices.Equal(bs[1].slaves, []string{"h:2", "h:3"}) {
		t.Fatalf("brokers %+v", bs)
	}
	if _, err := ci.brokers("X"); err == nil {
		t.Fatal("unknown cluster accepted")
	}
}
