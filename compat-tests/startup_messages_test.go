package compattest

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestStartupMessages: a broker that cannot start says why in terms of
// what the operator gave it: the missing file named once, a store path
// under a regular file as the store's problem (not ACL 2.0's).
func TestStartupMessages(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(dir, "broker.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("storePathRootDir=%s/store\nlistenPort=%d\n", file, port)), 0o644); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(dir, "missing.conf")
	for _, c := range []struct {
		conf, want, not string
	}{
		{missing, "config: open " + missing + ": no such file or directory", "open " + missing + ": open"},
		{conf, `"message":"store directory unusable"`, "acl"},
	} {
		cmd := exec.Command(filepath.Join(binDir, "mqbroker"), "-c", c.conf)
		cmd.Env = append(os.Environ(), "ROCKETGO_LOG_FORMAT=json")
		out, err := cmd.CombinedOutput()
		if err == nil {
			t.Fatalf("-c %s: started", c.conf)
		}
		if !strings.Contains(string(out), c.want) || strings.Contains(string(out), c.not) {
			t.Errorf("-c %s: %s\nwant %q, without %q", c.conf, out, c.want, c.not)
		}
	}
}
