package testutil

import (
	"bytes"
	"fmt"
	"os/exec"
	"testing"
)

// MountTmpfs mounts a tmpfs of sizeMB MiB on a new temporary directory
// and returns it, unmounted at the test's end; the test is skipped where
// mounting needs rights it does not have (root or CAP_SYS_ADMIN). For
// tests of a file system that is really full, which a fake disk-usage hook
// cannot show (ENOSPC on write, SIGBUS through a mapping).
func MountTmpfs(t testing.TB, sizeMB int) string {
	t.Helper()
	dir := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", fmt.Sprintf("size=%dm", sizeMB), "tmpfs", dir).CombinedOutput(); err != nil {
		t.Skipf("cannot mount a %d MiB tmpfs (%v: %s): skipping", sizeMB, err, bytes.TrimSpace(out))
	}
	t.Cleanup(func() { // before TempDir's removal: cleanups run last first
		if out, err := exec.Command("umount", dir).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v: %s", dir, err, out)
		}
	})
	return dir
}
