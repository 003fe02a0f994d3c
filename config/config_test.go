package config

import (
	"fmt"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

type inner struct {
	FlushDiskType string `key:"flushDiskType"`
}

type sample struct {
	BrokerName string  `key:"brokerName"`
	BrokerID   int64   `key:"brokerId"`
	AutoCreate bool    `key:"autoCreateTopicEnable"`
	ListenPort int     `key:"listenPort"`
	DiskRatio  float64 `key:"diskMaxUsedSpaceRatio"`
	Store      inner
	// notExported is tagged and named in TestParse's input: the loader must
	// skip it (reflect cannot set it).
	notExported string `key:"notExported"`
}

func TestParse(t *testing.T) {
	in := `# comment
! also comment
brokerName = broker-a
brokerId:0
autoCreateTopicEnable   TRUE
listenPort=109\
11
flushDiskType=SYNC_FLUSH
diskMaxUsedSpaceRatio=75.5
unknownKey=whatever
notExported=set
`
	var s sample
	if err := Parse(strings.NewReader(in), &s, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	want := sample{BrokerName: "broker-a", BrokerID: 0, AutoCreate: true, ListenPort: 10911, DiskRatio: 75.5,
		Store: inner{FlushDiskType: "SYNC_FLUSH"}}
	if s != want || s.notExported != "" {
		t.Fatalf("got %+v, want %+v", s, want)
	}
}

func TestParseBadInt(t *testing.T) {
	var s sample
	if err := Parse(strings.NewReader("listenPort=abc\n"), &s, zerolog.Nop()); err == nil {
		t.Fatal("want error for non-numeric listenPort")
	}
}

func TestReadPropertiesEscapes(t *testing.T) {
	got, err := ReadProperties(strings.NewReader(`a\=b=c\td` + "\n" + `u=\u0041x` + "\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != [2]string{"a=b", "c\td"} || got[1] != [2]string{"u", "Ax"} {
		t.Fatalf("got %q", got)
	}
}

func TestPairs(t *testing.T) {
	s := sample{BrokerName: "b", ListenPort: 1, Store: inner{FlushDiskType: "SYNC_FLUSH"}}
	got := Pairs(&s)
	if len(got) != 6 || got[0] != [2]string{"brokerName", "b"} || got[5] != [2]string{"flushDiskType", "SYNC_FLUSH"} {
		t.Fatalf("got %q", got)
	}
}

// Line ends as java.util.Properties reads them: "\n", "\r\n" and a lone "\r".
func TestReadPropertiesLineEnds(t *testing.T) {
	pairs, err := ReadProperties(strings.NewReader("a=1\rb=2\r\nc=3\nd=4\\\r  5\r"))
	if err != nil {
		t.Fatal(err)
	}
	want := [][2]string{{"a", "1"}, {"b", "2"}, {"c", "3"}, {"d", "45"}}
	if len(pairs) != len(want) {
		t.Fatalf("pairs %q, want %q", pairs, want)
	}
	for i := range want {
		if pairs[i] != want[i] {
			t.Fatalf("pairs %q, want %q", pairs, want)
		}
	}
}

// TestSecretPairs: a Secret prints as "***" in Pairs and keeps its value
// in FilePairs, nested structs included; an empty one prints empty.
func TestSecretPairs(t *testing.T) {
	type secretInner struct {
		Pass Secret `key:"pass"`
	}
	var c struct {
		Name  string `key:"name"`
		Empty Secret `key:"empty"`
		In    secretInner
	}
	if err := Set(&c, "pass", "s3cret"); err != nil {
		t.Fatal(err)
	}
	c.Name = "n"
	if got := fmt.Sprint(Pairs(&c)); got != "[[name n] [empty ] [pass ***]]" {
		t.Errorf("Pairs = %s", got)
	}
	if got := fmt.Sprint(FilePairs(c)); got != "[[name n] [empty ] [pass s3cret]]" {
		t.Errorf("FilePairs = %s", got)
	}
}
