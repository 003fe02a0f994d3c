package signature

import (
	"crypto/subtle"
	"sync"

	"github.com/rocketgo/rocketgo/remoting"
)

// versionV4_9_3 is MQVersion.Version.V4_9_3's ordinal: clients up to it
// add _UNIQUE_KEY_QUERY after signing, so Apache leaves it out.
const versionV4_9_3 = 399

// Verify is ACL 2.0's comparison of req's signature sig with the signer's
// secret, in constant time. Besides Apache's content it accepts the Go
// client's, which adds SecurityToken without signing it (tried only when
// the first comparison fails and the field is there).
func (m *Signer) Verify(req *remoting.Command, sig string) bool {
	var buf [32]byte // a Base64 HMAC-SHA1 is 28 bytes
	var skip [2]string
	n := 0
	if req.Version <= versionV4_9_3 {
		skip[n] = FieldUniqueQuery
		n++
	}
	if subtle.ConstantTimeCompare(m.Sign(buf[:0], req, skip[:n]...), []byte(sig)) == 1 {
		return true
	}
	if _, st := req.Lookup(FieldSecurityToken); !st {
		return false
	}
	skip[n] = FieldSecurityToken
	n++
	return subtle.ConstantTimeCompare(m.Sign(buf[:0], req, skip[:n]...), []byte(sig)) == 1
}

// Key is a password with its signers pooled; safe for concurrent use.
type Key struct {
	secret  []byte
	signers sync.Pool // *Signer with secret
}

// NewKey keys signatures with password.
func NewKey(password string) *Key { return &Key{secret: []byte(password)} }

// Signer takes a signer of the key's secret; give it back with Release.
func (k *Key) Signer() *Signer {
	if s, ok := k.signers.Get().(*Signer); ok {
		return s
	}
	return NewSigner(k.secret)
}

// Release returns a signer taken with Signer.
func (k *Key) Release(s *Signer) { k.signers.Put(s) }

// Verify is Signer.Verify with one of the key's signers.
func (k *Key) Verify(req *remoting.Command, sig string) bool {
	s := k.Signer()
	defer k.Release(s)
	return s.Verify(req, sig)
}

// Account is what Authenticate needs of a user.
type Account interface {
	// Disabled reports a user whose status is disable.
	Disabled() bool
	// Verify reports whether sig signs req with the user's password.
	Verify(req *remoting.Command, sig string) bool
}

// Authenticate is DefaultAuthenticationHandler: req must carry the
// AccessKey of a user lookup knows (ok false: none), enabled, whose
// password signs req as the client signed it. It returns the user's name
// and "" when it does, else Apache's AuthenticationException message, which
// the server answers NO_PERMISSION (16).
func Authenticate(req *remoting.Command, lookup func(name string) (Account, bool)) (user, refusal string) {
	ak, _ := req.Lookup(FieldAccessKey)
	if ak == "" {
		return "", "username cannot be null."
	}
	u, ok := lookup(ak)
	if !ok {
		return ak, "User:" + ak + " is not found."
	}
	if u.Disabled() {
		return ak, "User:" + ak + " is disabled."
	}
	sig, ok := req.Lookup(FieldSignature)
	if !ok || !u.Verify(req, sig) {
		return ak, "check signature failed."
	}
	return ak, ""
}
