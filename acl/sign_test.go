package acl

import (
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// loadFrame reads a frame captured from the Java client (without its
// length field).
func loadFrame(t testing.TB, name string) *remoting.Command {
	t.Helper()
	c, err := remoting.DecodeFrame(testutil.Vector(t, "testdata/"+name))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// The Java 4.9.8 client's signatures (testdata/SignVectors.java) verify,
// with the right secret only.
func TestVerifyJavaVectors(t *testing.T) {
	for _, name := range []string{"signed-send-v2.hex", "signed-pull-token.hex", "signed-heartbeat.hex"} {
		t.Run(name, func(t *testing.T) {
			req := loadFrame(t, name)
			sig, ok := req.Lookup(fieldSignature)
			if !ok {
				t.Fatal("no Signature in the vector")
			}
			if got := string(Sign(nil, []byte("rocketgoSecret"), req)); got != sig {
				t.Fatalf("Sign = %s, the Java client signed %s", got, sig)
			}
			if !acct("rocketgoSecret").verify(req, sig) {
				t.Fatal("the Java client's signature does not verify")
			}
			if acct("rocketgoSecreT").verify(req, sig) {
				t.Fatal("verified with a wrong secret")
			}
			req.Body = append([]byte("x"), req.Body...)
			if acct("rocketgoSecret").verify(req, sig) {
				t.Fatal("verified with a changed body")
			}
		})
	}
}

// The Go client adds SecurityToken after signing; clients before 4.9.4
// add _UNIQUE_KEY_QUERY after signing: both verify, and nothing else
// may be left out.
func TestVerifyUnsignedFields(t *testing.T) {
	secret := []byte("rocketgoSecret")
	req := loadFrame(t, "signed-send-v2.hex")
	req.Set(fieldSignature, string(Sign(nil, secret, req)))
	req.ExtFields = append(req.ExtFields, remoting.Field{Key: fieldSecurityToken, Value: "tok"},
		remoting.Field{Key: fieldUniqueQuery, Value: "true"})
	sig, _ := req.Lookup(fieldSignature)
	if !acct(string(secret)).verify(req, sig) {
		t.Fatal("unsigned SecurityToken and _UNIQUE_KEY_QUERY refused")
	}
	req.ExtFields = append(req.ExtFields, remoting.Field{Key: "c", Value: "changed"})
	if acct(string(secret)).verify(req, sig) {
		t.Fatal("a changed signed field verified")
	}
}

func acct(secret string) *Account { return &Account{secret: []byte(secret)} }
