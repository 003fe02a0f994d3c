package logging

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestLogDirAndFormat: with ROCKETGO_LOG_DIR the program's file gets JSON
// lines at the level asked, whatever the terminal format; an unknown
// format is refused.
func TestLogDirAndFormat(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	t.Setenv("ROCKETGO_LOG_DIR", dir)
	t.Setenv("ROCKETGO_LOG_FORMAT", "console")
	t.Setenv("ROCKETGO_LOG", "warn")
	log, c, err := New("mqtest")
	if err != nil {
		t.Fatal(err)
	}
	log.Info().Msg("not at warn")
	log.Warn().Str("k", "v").Msg("kept")
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, "mqtest.log"))
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	var rec map[string]any
	if len(lines) != 1 || json.Unmarshal([]byte(lines[0]), &rec) != nil || rec["message"] != "kept" || rec["k"] != "v" {
		t.Fatalf("log file %q", b)
	}
	t.Setenv("ROCKETGO_LOG_FORMAT", "xml")
	if _, _, err := New("mqtest"); err == nil {
		t.Fatal("format xml accepted")
	}
}

// TestIsTerminal: the auto format tells a terminal (a pseudo-terminal's
// master) from a file.
func TestIsTerminal(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "log")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if isTerminal(f) {
		t.Error("a regular file is a terminal")
	}
	pty, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Skipf("no pseudo-terminal here: %v", err)
	}
	defer pty.Close()
	if !isTerminal(pty) {
		t.Error("/dev/ptmx is not a terminal")
	}
}
