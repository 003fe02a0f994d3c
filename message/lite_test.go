package message

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestConsistentHash checks ConsistentHash against vectors printed by
// Guava 32.0.1's Hashing.consistentHash (testdata/consistenthash.tsv:
// key, buckets, bucket; a key "#n" is the long n, any other key is hashed
// with String.hashCode).
func TestConsistentHash(t *testing.T) {
	f, err := os.Open("testdata/consistenthash.tsv")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		parts := strings.Split(sc.Text(), "\t")
		if len(parts) != 3 {
			t.Fatalf("line %q", sc.Text())
		}
		var in int64
		if v, ok := strings.CutPrefix(parts[0], "#"); ok {
			in, _ = strconv.ParseInt(v, 10, 64)
		} else {
			in = int64(JavaHash(parts[0]))
		}
		b, _ := strconv.Atoi(parts[1])
		want, _ := strconv.Atoi(parts[2])
		if got := ConsistentHash(in, b); got != want {
			t.Errorf("ConsistentHash(%d (%q), %d) = %d, Guava %d", in, parts[0], b, got, want)
		}
		n++
	}
	if n < 100 {
		t.Fatalf("only %d vectors", n)
	}
}

func TestParseLiteQueue(t *testing.T) {
	for _, c := range []struct {
		name, parent, lite string
		ok                 bool
	}{
		{"%LMQ%$P$l-1", "P", "l-1", true},
		{LiteQueue("Parent", "x_y"), "Parent", "x_y", true},
		{"%LMQ%$P$", "", "", false},
		{"%LMQ%$$l", "", "", false},
		{"%LMQ%$P", "", "", false},
		{"%LMQ%$P$l$m", "", "", false},
		{"%LMQ%P$l", "", "", false},
		{"P$l", "", "", false},
	} {
		p, l, ok := ParseLiteQueue(c.name)
		if p != c.parent || l != c.lite || ok != c.ok {
			t.Errorf("ParseLiteQueue(%q) = %q, %q, %v", c.name, p, l, ok)
		}
	}
	if LiteQueue("", "l") != "" || LiteQueue("P", "") != "" {
		t.Error("LiteQueue of an empty part is not empty")
	}
	if !LiteQueueOf("%LMQ%$P$l", "P") || LiteQueueOf("%LMQ%$PP$l", "P") || LiteQueueOf("%LMQ%$P", "P") {
		t.Error("LiteQueueOf")
	}
}

func TestLiteTopicProblem(t *testing.T) {
	for lite, want := range map[string]string{
		"ok-1_A":                "",
		"":                      "lite topic cannot be the char sequence of whitespace",
		" \t\u3000":             "lite topic cannot be the char sequence of whitespace",
		strings.Repeat("a", 64): "",
		strings.Repeat("a", 65): "lite topic exceed the max size 64",
		strings.Repeat("é", 33): "lite topic exceed the max size 64",
		"a$b":                   "lite topic can only contain alphanumeric characters, hyphens(-), and underscores(_)",
		"../x":                  "lite topic can only contain alphanumeric characters, hyphens(-), and underscores(_)",
	} {
		if got := LiteTopicProblem(lite, MaxLiteTopicSize); got != want {
			t.Errorf("LiteTopicProblem(%q) = %q, want %q", lite, got, want)
		}
	}
}
