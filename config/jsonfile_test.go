package config

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/rs/zerolog"
)

func TestQuoteBareKeys(t *testing.T) {
	for in, want := range map[string]string{
		`{"offsetTable":{"T@G":{0:250,1:249},"x":{-1:3}}}`: `{"offsetTable":{"T@G":{"0":250,"1":249},"x":{"-1":3}}}`,
		"{\n\t0:1,\n\t\"a\":[1,2,{3:4}]}":                  "{\n\t\"0\":1,\n\t\"a\":[1,2,{\"3\":4}]}",
		`{"s":"{0:1,\"2:3"}`:                               `{"s":"{0:1,\"2:3"}`,
		`{"0":1}`:                                          `{"0":1}`,
	} {
		if got := string(QuoteBareKeys([]byte(in))); got != want {
			t.Errorf("QuoteBareKeys(%s)\n got %s\nwant %s", in, got, want)
		}
	}
}

func TestQuoteBareKeysEdges(t *testing.T) {
	tests := []struct{ in, want string }{
		{`{0:"a",1:"b"}`, `{"0":"a","1":"b"}`},
		{`{"k":{-1:[1,2]}}`, `{"k":{"-1":[1,2]}}`},
		{`[1,{2:3}]`, `[1,{"2":3}]`},
		{`{"s":"{0:\"x\"}"}`, `{"s":"{0:\"x\"}"}`},
		{`{ 7 : 8 }`, `{ "7" : 8 }`},
		{`{"unterminated`, `{"unterminated`},
	}
	for _, tt := range tests {
		if got := string(QuoteBareKeys([]byte(tt.in))); got != tt.want {
			t.Errorf("QuoteBareKeys(%s) = %s, want %s", tt.in, got, tt.want)
		}
	}
}

// LoadFile falls back to path.bak, as Apache's ConfigManager.load: when the
// file is missing, empty, or refused by decode.
func TestLoadFile(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "f.json")
	var got []string
	decode := func(b []byte) error {
		if !json.Valid(b) {
			return errors.New("not JSON")
		}
		got = append(got, string(b))
		return nil
	}
	if err := LoadFile(path, zerolog.Nop(), decode); err != nil || len(got) != 0 {
		t.Fatalf("no files: %v %v", err, got)
	}
	for _, tc := range []struct{ main, bak, want string }{
		{"", `{"b":1}`, `{"b":1}`},
		{`{"m":{0:1}}`, `{"b":1}`, `{"m":{"0":1}}`},
		{`{"m":`, `{"b":1}`, `{"b":1}`},
	} {
		got = nil
		if err := os.WriteFile(path, []byte(tc.main), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path+".bak", []byte(tc.bak), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := LoadFile(path, zerolog.Nop(), decode); err != nil || len(got) != 1 || got[0] != tc.want {
			t.Errorf("main %q bak %q: %v %q, want %q", tc.main, tc.bak, err, got, tc.want)
		}
	}
	if err := os.WriteFile(path+".bak", []byte(`{"b":`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := LoadFile(path, zerolog.Nop(), decode); err == nil {
		t.Error("both files undecodable: want an error")
	}
}
