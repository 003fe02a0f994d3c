package config

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

func TestEditProperties(t *testing.T) {
	for _, c := range []struct {
		in    string
		set   map[string]string
		order []string
		want  string
	}{
		{"# c\na=1\n\nb = 2\n", map[string]string{"b": "3"}, []string{"b"}, "# c\na=1\n\nb=3\n"},
		{"a=1\r\nb:2\r\n", map[string]string{"a": "x"}, []string{"a"}, "a=x\r\nb:2\r\n"},
		{"a=1\\\n  continued\nb=2", map[string]string{"a": "y", "c": "z"}, []string{"a", "c"}, "a=y\nb=2\nc=z\n"},
		{"a=1\nb=2\na=3\n", map[string]string{"a": "9"}, []string{"a"}, "a=9\nb=2\na=9\n"},
		{"a=1\nb=2\n", map[string]string{"a": ""}, []string{"a"}, "b=2\n"},
		{"", map[string]string{"k": "v\\w"}, []string{"k"}, "k=v\\\\w\n"},
		{"  ! bang\nkey\\ with=1\n", map[string]string{"key with": "2"}, []string{"key with"}, "  ! bang\nkey\\ with=2\n"},
	} {
		got := EditProperties([]byte(c.in), c.set, c.order)
		if string(got) != c.want {
			t.Errorf("EditProperties(%q, %v) = %q, want %q", c.in, c.set, got, c.want)
			continue
		}
		pairs, err := ReadProperties(bytes.NewReader(got))
		if err != nil {
			t.Fatal(err)
		}
		read := map[string]string{}
		for _, kv := range pairs {
			read[kv[0]] = kv[1]
		}
		for k, v := range c.set {
			if read[k] != v {
				t.Errorf("%q reads %s=%q, want %q", got, k, read[k], v)
			}
		}
	}
}

func TestRotateBackups(t *testing.T) {
	path := filepath.Join(t.TempDir(), "broker.conf")
	for gen := range 6 {
		if err := RotateBackups(path, 3); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".bak", []byte{byte('0' + gen)}, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{".bak": "5", ".bak.1": "4", ".bak.2": "3", ".bak.3": "2"} {
		if b, err := os.ReadFile(path + name); err != nil || string(b) != want {
			t.Errorf("%s = %q, %v; want %q", name, b, err, want)
		}
	}
	if _, err := os.Stat(path + ".bak.4"); !os.IsNotExist(err) {
		t.Errorf(".bak.4 kept beyond 3 generations: %v", err)
	}
}
