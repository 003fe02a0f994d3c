package acl

import (
	"errors"
	"strings"
	"testing"
)

// sampleACL has the shape of Apache's distribution/conf/plain_acl.yml.
const sampleACL = `
globalWhiteRemoteAddresses:
  - 10.10.103.*
  - 192.168.0.*

accounts:
  - accessKey: RocketMQ
    secretKey: 12345678
    whiteRemoteAddress:
    admin: false
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms:
      - topicA=DENY
      - topicB=PUB|SUB
      - topicC=SUB
    groupPerms:
      - groupA=DENY
      - groupB=PUB|SUB
      - groupC=SUB

  - accessKey: rocketmq2
    secretKey: 12345678
    whiteRemoteAddress: 192.168.1.*
    admin: true
dataVersion:
  - counter: 1
    timestamp: 1700000000000
`

func TestParsePlainFile(t *testing.T) {
	t.Parallel()
	f, err := ParsePlainFile([]byte(sampleACL))
	if err != nil {
		t.Fatal(err)
	}
	if len(f.GlobalWhite) != 2 || len(f.Accounts) != 2 {
		t.Fatalf("%d global, %d accounts", len(f.GlobalWhite), len(f.Accounts))
	}
	a := f.Accounts[0]
	if a.AccessKey != "RocketMQ" || string(a.secret) != "12345678" || a.Admin ||
		a.DefaultTopic != Deny || a.DefaultGroup != Sub {
		t.Fatalf("account %+v", a)
	}
	want := map[string]Perm{"topicA": Deny, "topicB": Pub | Sub, "topicC": Sub,
		"%RETRY%groupA": Deny, "%RETRY%groupB": Pub | Sub, "%RETRY%groupC": Sub}
	for k, p := range want {
		if a.Perms[k] != p {
			t.Errorf("%s: %v, want %v", k, a.Perms[k], p)
		}
	}
	b := f.Accounts[1]
	if !b.Admin || b.Perms != nil || b.DefaultTopic != Deny {
		t.Fatalf("admin account %+v", b)
	}
}

func TestParsePlainFileErrors(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, yml, want string }{
		{"empty", "", "no data"},
		{"comments only", "# nothing\n", "no data"},
		{"short key", "accounts:\n  - accessKey: abc\n    secretKey: 12345678\n", "longer than 6"},
		{"short secret", "accounts:\n  - accessKey: abcdefgh\n    secretKey: hunter\n", "longer than 6"},
		{"bad perm item", "accounts:\n  - accessKey: abcdefgh\n    secretKey: 12345678\n    topicPerms: [topicA]\n", "topic:topicA"},
		{"bad address", "globalWhiteRemoteAddresses: [10.0.0.0/8]\n", "10.0.0.0/8"},
		{"bad admin", "accounts:\n  - accessKey: abcdefgh\n    secretKey: 12345678\n    admin: maybe\n", "boolean"},
		{"not yaml", "accounts: [\n", "yaml"},
		{"map as key", "accounts:\n  - accessKey: {a: b}\n    secretKey: 12345678\n", "scalar"},
	}
	for _, tt := range tests {
		_, err := ParsePlainFile([]byte(tt.yml))
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: %v, want %q", tt.name, err, tt.want)
		}
		if err != nil && strings.Contains(err.Error(), "hunter") {
			t.Errorf("%s: the error shows the secret: %v", tt.name, err)
		}
	}
	if _, err := ParsePlainFile(nil); !errors.Is(err, ErrEmpty) {
		t.Errorf("nil: %v", err)
	}
}

// A permission Apache does not know is DENY when it loads a file (it is
// checked only by the admin codes).
func TestParsePlainFileUnknownPerm(t *testing.T) {
	t.Parallel()
	f, err := ParsePlainFile([]byte("accounts:\n  - accessKey: abcdefgh\n    secretKey: 12345678\n    defaultTopicPerm: PUBLISH\n    topicPerms: [t=ALL]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if a := f.Accounts[0]; a.DefaultTopic != Deny || a.Perms["t"] != Deny {
		t.Fatalf("%+v", a)
	}
}
