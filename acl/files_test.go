package acl

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/rs/zerolog"
)

func writeFile(t *testing.T, p, s string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(s), 0o644); err != nil {
		t.Fatal(err)
	}
}

// The default file and conf/acl's files load together; a change is picked
// up by Reload; a broken change keeps the rules in force.
func TestFilesReload(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	def := filepath.Join(home, "conf", "plain_acl.yml")
	writeFile(t, def, "accounts:\n  - accessKey: firstKey\n    secretKey: firstSecret\n")
	writeFile(t, filepath.Join(home, "conf", "acl", "team", "more.yaml"), "accounts:\n  - accessKey: secondKey\n    secretKey: secondSecret\n  - accessKey: firstKey\n    secretKey: shadowed\n")
	writeFile(t, filepath.Join(home, "conf", "acl", "notes.txt"), "not acl")
	f, err := NewFiles(home, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	r := f.Rules()
	if r.Accounts() != 2 || string(r.accounts["firstKey"].secret) != "shadowed" {
		// conf/acl is read before the default file: its account wins.
		t.Fatalf("accounts %d, firstKey's secret from the wrong file", r.Accounts())
	}

	f.Reload() // nothing changed: the same rules
	if f.Rules() != r {
		t.Fatal("reloaded without a change")
	}
	writeFile(t, def, "accounts:\n  - accessKey: thirdKey\n    secretKey: thirdSecret\n")
	bump(t, def)
	f.Reload()
	if f.Rules().accounts["thirdKey"] == nil {
		t.Fatal("change not loaded")
	}
	good := f.Rules()
	writeFile(t, def, "accounts: [\n")
	bump(t, def)
	f.Reload()
	if f.Rules() != good {
		t.Fatal("a broken file replaced the rules")
	}
	if err := os.Remove(filepath.Join(home, "conf", "acl", "team", "more.yaml")); err != nil {
		t.Fatal(err)
	}
	writeFile(t, def, "accounts:\n  - accessKey: thirdKey\n    secretKey: thirdSecret\n")
	bump(t, def)
	f.Reload()
	if n := f.Rules().Accounts(); n != 1 {
		t.Fatalf("%d accounts after a file went", n)
	}
}

// bump moves a file's modification time forward: two writes within the
// file system's clock granularity look the same otherwise.
func bump(t *testing.T, p string) {
	t.Helper()
	later := time.Now().Add(time.Duration(time.Now().UnixNano()%1000+1) * time.Second)
	if err := os.Chtimes(p, later, later); err != nil {
		t.Fatal(err)
	}
}

func TestFilesInvalidAtStart(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "conf", "plain_acl.yml"), "globalWhiteRemoteAddresses: [10.0.0.0/8]\n")
	if _, err := NewFiles(home, zerolog.Nop()); err == nil {
		t.Fatal("an invalid file loaded")
	}
	f, err := NewFiles("", zerolog.Nop())
	if err != nil || f.Rules().Accounts() != 0 {
		t.Fatalf("no home: %v", err)
	}
}
