package auth

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// TestStoreEditsDiskFull: an edit that cannot be written (the file system
// is full) fails, is not in force, and leaves the files as they were; the
// same edit succeeds once there is room again. Needs root to mount a small
// tmpfs; skipped elsewhere.
func TestStoreEditsDiskFull(t *testing.T) {
	dir := testutil.MountTmpfs(t, 1)
	s, err := OpenStore(dir)
	must(t, err)
	v := NewService(s)
	must(t, v.CreateUser("", UserInfo{Username: "alice", Password: "secret12"}))
	must(t, v.CreateAcl("User:alice", AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{{Resource: "Topic:a", Actions: []string{"Pub"}, Decision: "Allow"}}}}}))
	users, err := os.ReadFile(filepath.Join(dir, UsersFile))
	must(t, err)
	acls, err := os.ReadFile(filepath.Join(dir, AclsFile))
	must(t, err)

	filler := filepath.Join(dir, "filler")
	fill(t, filler)
	if err := v.CreateUser("", UserInfo{Username: "bob", Password: "secret12"}); err == nil {
		t.Fatal("a user was created on a full disk")
	} else {
		t.Logf("create on a full disk: %v", err)
	}
	if err := v.UpdateAcl("User:alice", AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{{Resource: "Topic:a", Actions: []string{"Pub"}, Decision: "Deny"}}}}}); err == nil {
		t.Fatal("an acl was updated on a full disk")
	}
	if s.LookupUser("bob") != nil {
		t.Error("the user refused for want of space is in force")
	}
	if a := s.LookupAcl("alice"); a == nil || len(a.Policies) != 1 || len(a.Policies[0].Entries) != 1 || a.Policies[0].Entries[0].Decision != Allow {
		t.Errorf("the acl refused for want of space changed what is in force: %+v", a)
	}
	for name, want := range map[string][]byte{UsersFile: users, AclsFile: acls} {
		if got, err := os.ReadFile(filepath.Join(dir, name)); err != nil || !bytes.Equal(got, want) {
			t.Errorf("%s after the failed edits: %v\n%s\nwant\n%s", name, err, got, want)
		}
	}
	if left, _ := filepath.Glob(filepath.Join(dir, "*.tmp")); len(left) > 0 {
		t.Errorf("failed writes left %v holding the space", left)
	}
	// A store reopened on the full disk holds what was acknowledged.
	s2, err := OpenStore(dir)
	must(t, err)
	if s2.LookupUser("alice") == nil || s2.LookupUser("bob") != nil {
		t.Errorf("reopened on a full disk: alice %v bob %v", s2.LookupUser("alice"), s2.LookupUser("bob"))
	}

	must(t, os.Remove(filler))
	must(t, v.CreateUser("", UserInfo{Username: "bob", Password: "secret12"}))
	s3, err := OpenStore(dir)
	must(t, err)
	if s3.LookupUser("bob") == nil {
		t.Error("bob, created once there was room, is not in the reopened store")
	}
}

// fill writes path until the file system refuses with ENOSPC.
func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	must(t, err)
	defer f.Close()
	buf := make([]byte, 64<<10)
	for {
		if _, err := f.Write(buf); err != nil {
			if errors.Is(err, syscall.ENOSPC) {
				return
			}
			t.Fatal(fmt.Errorf("fill %s: %w", path, err))
		}
	}
}
