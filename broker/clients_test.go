package broker

import (
	"reflect"
	"testing"

	"github.com/rocketgo/rocketgo/message"
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
