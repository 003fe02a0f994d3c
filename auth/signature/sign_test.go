package signature

import (
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

func TestSignedFieldsLastValueWins(t *testing.T) {
	req := &remoting.Command{ExtFields: []remoting.Field{{Key: "b", Value: "1"}, {Key: "a", Value: "2"}, {Key: "b", Value: "3"}, {Key: "Signature", Value: "x"}}}
	idx := signedFields(nil, req, nil)
	var got []string
	for _, i := range idx {
		got = append(got, req.ExtFields[i].Key+"="+req.ExtFields[i].Value)
	}
	if strings.Join(got, ",") != "a=2,b=3" {
		t.Fatalf("signed fields %v", got)
	}
}

// user is an Account for the tests.
type user struct {
	key      *Key
	disabled bool
}

func (u user) Disabled() bool                                { return u.disabled }
func (u user) Verify(req *remoting.Command, sig string) bool { return u.key.Verify(req, sig) }

func signed(ak, password string) *remoting.Command {
	req := &remoting.Command{Code: 100, Version: 453, Body: []byte("body")}
	req.Set("namespace", "ns")
	req.Set("key", "k")
	if ak != "" {
		req.Set(FieldAccessKey, ak)
		req.Set(FieldSignature, string(Sign(nil, []byte(password), req)))
	}
	return req
}

// Each refusal has Apache's message; a signed request by a known user
// passes, with its name.
func TestAuthenticate(t *testing.T) {
	users := map[string]user{
		"alice": {key: NewKey("alicePass")},
		"bob":   {key: NewKey("bobPass"), disabled: true},
	}
	lookup := func(name string) (Account, bool) { u, ok := users[name]; return u, ok }
	tamper := signed("alice", "alicePass")
	tamper.Set("key", "other")
	goClient := signed("alice", "alicePass")
	goClient.Set(FieldSecurityToken, "tok") // the Go client adds it unsigned
	for _, c := range []struct {
		name    string
		req     *remoting.Command
		user    string
		refusal string
	}{
		{"anonymous", signed("", ""), "", "username cannot be null."},
		{"unknown", signed("carol", "x"), "carol", "User:carol is not found."},
		{"disabled", signed("bob", "bobPass"), "bob", "User:bob is disabled."},
		{"wrong password", signed("alice", "bobPass"), "alice", "check signature failed."},
		{"tampered", tamper, "alice", "check signature failed."},
		{"signed", signed("alice", "alicePass"), "alice", ""},
		{"go client token", goClient, "alice", ""},
	} {
		u, r := Authenticate(c.req, lookup)
		if u != c.user || r != c.refusal {
			t.Errorf("%s: Authenticate = %q, %q; want %q, %q", c.name, u, r, c.user, c.refusal)
		}
	}
	noSig := signed("alice", "alicePass")
	noSig.ExtFields = noSig.ExtFields[:len(noSig.ExtFields)-1]
	if _, r := Authenticate(noSig, lookup); r != "check signature failed." {
		t.Errorf("no Signature: %q", r)
	}
}
