package acl

import (
	"crypto/subtle"

	"github.com/rocketgo/rocketgo/auth/signature"
	"github.com/rocketgo/rocketgo/remoting"
)

// The extFields the clients add (SessionCredentials).
const (
	fieldAccessKey     = signature.FieldAccessKey
	fieldSignature     = signature.FieldSignature
	fieldSecurityToken = signature.FieldSecurityToken
	fieldUniqueQuery   = signature.FieldUniqueQuery
)

// Sign is signature.Sign: the signature the clients compute.
func Sign(dst []byte, secret []byte, req *remoting.Command, skip ...string) []byte {
	return signature.Sign(dst, secret, req, skip...)
}

// verify checks req's Signature with a's secret in constant time, first
// as the Java client signs, then without SecurityToken (the Go client adds
// it unsigned) and without _UNIQUE_KEY_QUERY (clients before 4.9.4 add it
// after signing), each only when present.
func (a *Account) verify(req *remoting.Command, sig string) bool {
	m, _ := a.macs.Get().(*signature.Signer)
	if m == nil {
		m = signature.NewSigner(a.secret)
	}
	defer a.macs.Put(m)
	var buf [32]byte // a Base64 HMAC-SHA1 is 28 bytes
	try := func(skip ...string) bool {
		return subtle.ConstantTimeCompare(m.Sign(buf[:0], req, skip...), []byte(sig)) == 1
	}
	if try() {
		return true
	}
	_, st := req.Lookup(fieldSecurityToken)
	_, uq := req.Lookup(fieldUniqueQuery)
	return st && try(fieldSecurityToken) ||
		uq && try(fieldUniqueQuery) ||
		st && uq && try(fieldSecurityToken, fieldUniqueQuery)
}
