package testutil

import (
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// update makes Golden rewrite the files it compares with: `go test ./pkg
// -update`, then review the diff. Vectors read with Vector are never
// rewritten.
var update = flag.Bool("update", false, "rewrite golden files in testdata/ with what the code produces")

// Golden compares got with the file at path (a golden output of our own, in
// testdata/), or rewrites the file when the test runs with -update. A file
// may end with one newline got does not have (so that editors leave it
// alone).
func Golden(t testing.TB, path string, got []byte) {
	t.Helper()
	if *update {
		out := got
		if !bytes.HasSuffix(out, []byte("\n")) {
			out = append(bytes.Clone(got), '\n')
		}
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden file (go test -update writes it): %v", err)
	}
	if !bytes.HasSuffix(got, []byte("\n")) {
		want = bytes.TrimSuffix(want, []byte("\n"))
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs (go test -update rewrites it)\n got %s\nwant %s", path, got, want)
	}
}

// Vector reads a byte vector written by hand from a spec or captured from an
// Apache peer (testdata/*.hex). The format keeps each field on its own line
// with its meaning beside it:
//
//	# a comment, to the end of the line
//	0000 0073          hex digits, in pairs; blanks anywhere between pairs
//	"TAGS\x01TagA\x02" a Go string literal ("..." or `...`): its bytes
func Vector(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	v, err := ParseVector(string(b))
	if err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	return v
}

// ParseVector decodes the format Vector reads.
func ParseVector(s string) ([]byte, error) {
	var out []byte
	for n, line := range strings.Split(s, "\n") {
		for i := 0; i < len(line); {
			c := line[i]
			switch {
			case c == '#':
				i = len(line)
			case c == ' ' || c == '\t' || c == '\r':
				i++
			case c == '"' || c == '`':
				q, err := strconv.QuotedPrefix(line[i:])
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", n+1, err)
				}
				u, err := strconv.Unquote(q)
				if err != nil {
					return nil, fmt.Errorf("line %d: %w", n+1, err)
				}
				out = append(out, u...)
				i += len(q)
			default:
				if i+1 >= len(line) {
					return nil, fmt.Errorf("line %d: odd number of hex digits", n+1)
				}
				v, err := strconv.ParseUint(line[i:i+2], 16, 8)
				if err != nil {
					return nil, fmt.Errorf("line %d: %q is not a hex byte", n+1, line[i:i+2])
				}
				out = append(out, byte(v))
				i += 2
			}
		}
	}
	return out, nil
}
