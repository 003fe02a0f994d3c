package acl

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"
)

func adminFiles(t *testing.T) (*Files, string) {
	t.Helper()
	home := t.TempDir()
	writeFile(t, filepath.Join(home, "conf", "plain_acl.yml"), "# operators' note\nglobalWhiteRemoteAddresses:\n  - 10.10.103.*\naccounts:\n  - accessKey: firstKey\n    secretKey: firstSecret\n    defaultTopicPerm: PUB # kept\n")
	writeFile(t, filepath.Join(home, "conf", "acl", "team.yml"), "accounts:\n  - accessKey: teamKey1\n    secretKey: teamSecret\n    topicPerms: [t1=SUB]\n")
	f, err := NewFiles(home, zerolog.Nop())
	if err != nil {
		t.Fatal(err)
	}
	return f, home
}

func TestUpdateAccount(t *testing.T) {
	t.Parallel()
	f, home := adminFiles(t)
	def := filepath.Join(home, "conf", "plain_acl.yml")
	v0 := f.Version()
	// A new key goes to the default file, in force at once.
	if err := f.UpdateAccount(AccountUpdate{AccessKey: "newKey01", SecretKey: "newSecret1", DefaultTopicPerm: "PUB|SUB",
		TopicPerms: []string{"a=DENY"}, HasTopicPerms: true}); err != nil {
		t.Fatal(err)
	}
	a := f.Rules().accounts["newKey01"]
	if a == nil || string(a.secret) != "newSecret1" || a.DefaultTopic != Pub|Sub || a.Perms["a"] != Deny || a.file != def {
		t.Fatalf("new account %+v", a)
	}
	data, _ := os.ReadFile(def)
	if !strings.Contains(string(data), "# operators' note") || !strings.Contains(string(data), "# kept") {
		t.Fatalf("comments lost:\n%s", data)
	}
	if v := f.Version(); v.Counter != v0.Counter+1 {
		t.Fatalf("dataVersion %+v after one edit (was %+v)", v, v0)
	}
	// A known key is edited where it is defined; what the header lacks stays.
	if err := f.UpdateAccount(AccountUpdate{AccessKey: "teamKey1", SecretKey: "teamSecret2", Admin: true}); err != nil {
		t.Fatal(err)
	}
	a = f.Rules().accounts["teamKey1"]
	if a == nil || string(a.secret) != "teamSecret2" || !a.Admin || a.Perms["t1"] != Sub || !strings.HasSuffix(a.file, "team.yml") {
		t.Fatalf("edited account %+v", a)
	}
	before, _ := os.ReadFile(def)
	for _, bad := range []struct {
		u    AccountUpdate
		want string
	}{
		{AccountUpdate{AccessKey: "shortKey1", SecretKey: "abc"}, "cannot be null and length should longer than 6"},
		{AccountUpdate{AccessKey: "permKey01", SecretKey: "permSecret", TopicPerms: []string{"a=ALL"}, HasTopicPerms: true}, "The expected permissions are"},
		{AccountUpdate{AccessKey: "permKey01", SecretKey: "permSecret", GroupPerms: []string{"g"}, HasGroupPerms: true}, "The expected resource format is 'Res=Perm'"},
		{AccountUpdate{AccessKey: "addrKey01", SecretKey: "addrSecret", WhiteRemoteAddress: "10.0.0.0/8", HasWhite: true}, "10.0.0.0/8"},
	} {
		if err := f.UpdateAccount(bad.u); err == nil || !strings.Contains(err.Error(), bad.want) {
			t.Errorf("%+v: %v, want %q", bad.u, err, bad.want)
		}
	}
	if after, _ := os.ReadFile(def); string(after) != string(before) {
		t.Fatalf("a refused update changed the file:\n%s", after)
	}
}

func TestDeleteAccount(t *testing.T) {
	t.Parallel()
	f, _ := adminFiles(t)
	if err := f.DeleteAccount("teamKey1"); err != nil {
		t.Fatal(err)
	}
	if f.Rules().accounts["teamKey1"] != nil {
		t.Fatal("deleted account still in force")
	}
	if err := f.DeleteAccount("teamKey1"); !errors.Is(err, ErrNoAccount) {
		t.Fatalf("second delete: %v", err)
	}
	if f.Rules().accounts["firstKey"] == nil {
		t.Fatal("another account went too")
	}
}

func TestUpdateGlobalWhite(t *testing.T) {
	t.Parallel()
	f, home := adminFiles(t)
	if err := f.UpdateGlobalWhite([]string{"127.0.0.1", "192.168.0.{1,2}"}, ""); err != nil {
		t.Fatal(err)
	}
	if g := f.Rules().global; len(g) != 2 {
		t.Fatalf("%d global white addresses", len(g))
	}
	team := filepath.Join(home, "conf", "acl", "team.yml")
	if err := f.UpdateGlobalWhite([]string{"10.1.1.1"}, team); err != nil {
		t.Fatal(err)
	}
	if g := f.Rules().global; len(g) != 3 {
		t.Fatalf("%d global white addresses after a second file", len(g))
	}
	outside := filepath.Join(t.TempDir(), "x.yml")
	writeFile(t, outside, "a: b\n")
	for _, p := range []string{outside, filepath.Join(home, "conf", "acl", "missing.yml"), filepath.Join(home, "conf", "acl", "..", "..", "..", "x.yml"),
		filepath.Join(home, "conf", "broker.conf")} {
		if err := f.UpdateGlobalWhite([]string{"1.2.3.4"}, p); !errors.Is(err, ErrNotACLFile) {
			t.Errorf("%s: %v", p, err)
		}
	}
	if err := f.UpdateGlobalWhite([]string{"1.2.3.0/24"}, ""); err == nil {
		t.Error("an invalid address written")
	}
}
