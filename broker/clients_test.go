package broker

import (
	"reflect"
	"testing"
	"time"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

func TestTagSubscription(t *testing.T) {
	s := NewTagSubscription("T", " TagA ||TagB|| ", 0)
	if !reflect.DeepEqual(s.Tags, []string{"TagA", "TagB"}) {
		t.Fatalf("tags %q", s.Tags)
	}
	if !s.MatchTagsCode(message.TagsHash("TagA")) || s.MatchTagsCode(message.TagsHash("TagC")) {
		t.Fatal("tag code matching wrong")
	}
	if all := NewTagSubscription("T", "*", 0); !all.All() || !all.MatchTagsCode(123) {
		t.Fatal("* must match everything")
	}
}

func TestMatchTagCollision(t *testing.T) {
	// "Aa" and "BB" share a Java hash: the code filter passes both, the string check does not.
	s := NewTagSubscription("T", "Aa", 0)
	if message.TagsHash("Aa") != message.TagsHash("BB") || !s.MatchTagsCode(message.TagsHash("BB")) {
		t.Fatal("expected a hash collision")
	}
	if !s.MatchTag([]byte("Aa")) || s.MatchTag([]byte("BB")) || s.MatchTag(nil) {
		t.Fatal("string match wrong")
	}
}

// Pulls that carry their TAG expression get one parse per expression.
func TestFiltersTagsParsedOnce(t *testing.T) {
	var f Filters
	a, _ := f.Tags("TagA||TagB")
	if !a.MatchTag([]byte("TagB")) || a.MatchTag([]byte("TagC")) {
		t.Fatalf("tags %q", a.Tags)
	}
	if b, _ := f.Tags("TagA||TagB"); b != a {
		t.Fatal("the same expression was parsed again")
	}
	if n := testing.AllocsPerRun(100, func() { f.Tags("TagA||TagB") }); n != 0 {
		t.Fatalf("a cached expression allocates %v times", n)
	}
}

// Heartbeat V2 (Apache's heartBeatV2): IS_SUB_CHANGE says a group's
// fingerprint changed; a lite heartbeat (withoutSub) keeps the subscriptions.
func TestHeartbeatV2(t *testing.T) {
	cs := newClients(time.Minute, zerolog.Nop())
	c := &remoting.Conn{ID: 1, Remote: "127.0.0.1:9"}
	full := ConsumerInfo{Group: "G", MessageModel: "CLUSTERING", Subscriptions: []*Subscription{NewTagSubscription("T", "a", 1)}}
	steps := []struct {
		print      int32
		withoutSub bool
		info       ConsumerInfo
		change     bool
	}{
		{0, false, full, false},                    // a V1 heartbeat records 0
		{7, false, full, true},                     // 0 → 7
		{7, true, ConsumerInfo{Group: "G"}, false}, // lite, same print
		{8, true, ConsumerInfo{Group: "G"}, true},  // lite, new print: the client sends full next
	}
	for i, s := range steps {
		if got := cs.RegisterConsumerV2(c, "c1", remoting.LangJava, 500, s.info, false, s.print, s.withoutSub); got != s.change {
			t.Errorf("step %d: subChange %v, want %v", i, got, s.change)
		}
		if sub, _ := cs.Subscription("G", "T"); sub == nil || sub.SubString != "a" {
			t.Fatalf("step %d: subscription %+v, want T/a kept", i, sub)
		}
	}
}
