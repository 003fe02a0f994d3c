package acl

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
	"hash"
	"slices"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// The extFields the clients add (SessionCredentials).
const (
	fieldAccessKey     = "AccessKey"
	fieldSignature     = "Signature"
	fieldSecurityToken = "SecurityToken"
	fieldUniqueQuery   = "_UNIQUE_KEY_QUERY" // MixAll.UNIQUE_MSG_QUERY_FLAG
)

// Sign is AclSigner.calSignature over a request's content: Base64 of
// HMAC-SHA1, keyed by the secret, over the values of the extFields but
// Signature (and those in skip), ordered by key, then the body. A key sent
// twice counts once, with its last value (the Java decoder's HashMap).
// It appends to dst.
func Sign(dst []byte, secret []byte, req *remoting.Command, skip ...string) []byte {
	return newMAC(secret).sign(dst, req, skip)
}

// mac is a keyed HMAC-SHA1 with its scratch, reused across requests (an
// Account pools them): the hash.Hash interface makes anything handed to
// it escape, so the buffers live here rather than on the stack.
type mac struct {
	h    hash.Hash
	text [512]byte // the values, written in few calls
	sum  [sha1.Size]byte
	idx  [32]int
}

func newMAC(secret []byte) *mac { return &mac{h: hmac.New(sha1.New, secret)} }

func (m *mac) sign(dst []byte, req *remoting.Command, skip []string) []byte {
	m.h.Reset()
	buf := m.text[:0]
	for _, i := range signedFields(m.idx[:0], req, skip) {
		v := req.ExtFields[i].Value
		if len(buf)+len(v) > cap(buf) {
			_, _ = m.h.Write(buf) // hash.Hash never fails
			buf = buf[:0]
		}
		if len(v) > cap(buf) {
			_, _ = m.h.Write([]byte(v))
			continue
		}
		buf = append(buf, v...)
	}
	_, _ = m.h.Write(buf)
	_, _ = m.h.Write(req.Body)
	return base64.StdEncoding.AppendEncode(dst, m.h.Sum(m.sum[:0]))
}

// signedFields returns the indexes of the signed extFields, ordered by key
// (Java's TreeMap; keys are ASCII in practice, where UTF-8 byte order and
// Java's UTF-16 order agree).
func signedFields(idx []int, req *remoting.Command, skip []string) []int {
	f := req.ExtFields
outer:
	for i := range f {
		k := f[i].Key
		if k == fieldSignature || slices.Contains(skip, k) {
			continue
		}
		for j := i + 1; j < len(f); j++ {
			if f[j].Key == k {
				continue outer // a later value wins
			}
		}
		idx = append(idx, i)
	}
	slices.SortFunc(idx, func(a, b int) int { return strings.Compare(f[a].Key, f[b].Key) })
	return idx
}

// verify checks req's Signature with a's secret in constant time, first
// as the Java client signs, then without SecurityToken (the Go client adds
// it unsigned) and without _UNIQUE_KEY_QUERY (clients before 4.9.4 add it
// after signing), each only when present.
func (a *Account) verify(req *remoting.Command, sig string) bool {
	m, _ := a.macs.Get().(*mac)
	if m == nil {
		m = newMAC(a.secret)
	}
	defer a.macs.Put(m)
	var buf [32]byte // a Base64 HMAC-SHA1 is 28 bytes
	try := func(skip ...string) bool {
		return subtle.ConstantTimeCompare(m.sign(buf[:0], req, skip), []byte(sig)) == 1
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

// Signer is Sign with its HMAC and scratch kept for reuse (package auth
// pools one per user). It is not safe for concurrent use.
type Signer struct{ m *mac }

// NewSigner signs with secret.
func NewSigner(secret []byte) *Signer { return &Signer{m: newMAC(secret)} }

// Sign is Sign(dst, secret, req, skip...) with the signer's secret.
func (s *Signer) Sign(dst []byte, req *remoting.Command, skip ...string) []byte {
	return s.m.sign(dst, req, skip)
}
