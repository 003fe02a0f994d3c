package main

import (
	"testing"
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
