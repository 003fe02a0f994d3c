package tables

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
	cs := NewClients(time.Minute, zerolog.Nop())
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

// TestHeartbeatV2StaleSubscription: a pull refused as SUBSCRIPTION_NOT_LATEST
// makes that connection's next lite heartbeat answer IS_SUB_CHANGE=true (once),
// so the client sends its subscriptions again; other connections are not told.
func TestHeartbeatV2StaleSubscription(t *testing.T) {
	cs := NewClients(time.Minute, zerolog.Nop())
	c1 := &remoting.Conn{ID: 1, Remote: "127.0.0.1:9"}
	c2 := &remoting.Conn{ID: 2, Remote: "127.0.0.1:10"}
	full := ConsumerInfo{Group: "G", MessageModel: "CLUSTERING", Subscriptions: []*Subscription{NewTagSubscription("T", "a", 1)}}
	lite := ConsumerInfo{Group: "G"}
	for _, c := range []*remoting.Conn{c1, c2} {
		cs.RegisterConsumerV2(c, "c", remoting.LangJava, 500, full, false, 7, false)
	}
	cs.MarkSubscriptionStale("G", 1)
	cs.MarkSubscriptionStale("G", 99)     // unknown connection: nothing
	cs.MarkSubscriptionStale("nosuch", 1) // unknown group: nothing
	if cs.RegisterConsumerV2(c2, "c", remoting.LangJava, 500, lite, false, 7, true) {
		t.Error("c2's lite heartbeat: subChange, want false (only c1's pull was refused)")
	}
	if !cs.RegisterConsumerV2(c1, "c", remoting.LangJava, 500, lite, false, 7, true) {
		t.Error("c1's lite heartbeat after a stale pull: subChange false, want true")
	}
	if cs.RegisterConsumerV2(c1, "c", remoting.LangJava, 500, lite, false, 7, true) {
		t.Error("c1's next lite heartbeat: subChange true, want false (told once)")
	}
	// A V1 heartbeat (fingerprint 0) clears the mark: V1 answers true anyway.
	cs.MarkSubscriptionStale("G", 1)
	cs.RegisterConsumerV2(c1, "c", remoting.LangJava, 500, full, false, 0, false)
	cs.RegisterConsumerV2(c1, "c", remoting.LangJava, 500, full, false, 7, false) // 0 → 7 is a change
	if cs.RegisterConsumerV2(c1, "c", remoting.LangJava, 500, lite, false, 7, true) {
		t.Error("lite heartbeat after the mark was cleared: subChange true, want false")
	}
}
