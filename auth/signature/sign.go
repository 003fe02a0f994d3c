package signature

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/base64"
	"hash"
	"slices"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// The extFields the clients sign with (SessionCredentials, MixAll).
const (
	FieldAccessKey     = "AccessKey"
	FieldSignature     = "Signature"
	FieldSecurityToken = "SecurityToken"
	FieldUniqueQuery   = "_UNIQUE_KEY_QUERY" // MixAll.UNIQUE_MSG_QUERY_FLAG
)

// Sign is AclSigner.calSignature over a request's content: Base64 of
// HMAC-SHA1, keyed by the secret, over the values of the extFields but
// Signature (and those in skip), ordered by key, then the body. A key sent
// twice counts once, with its last value (the Java decoder's HashMap).
// It appends to dst.
func Sign(dst []byte, secret []byte, req *remoting.Command, skip ...string) []byte {
	return NewSigner(secret).Sign(dst, req, skip...)
}

// Signer is Sign with its HMAC and scratch kept for reuse: the hash.Hash
// interface makes anything handed to it escape, so the buffers live here
// rather than on the stack. It is not safe for concurrent use (Key pools
// them).
type Signer struct {
	h    hash.Hash
	text [512]byte // the values, written in few calls
	sum  [sha1.Size]byte
	idx  [32]int
}

// NewSigner signs with secret.
func NewSigner(secret []byte) *Signer { return &Signer{h: hmac.New(sha1.New, secret)} }

// Sign is Sign(dst, secret, req, skip...) with the signer's secret.
func (m *Signer) Sign(dst []byte, req *remoting.Command, skip ...string) []byte {
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
		if k == FieldSignature || slices.Contains(skip, k) {
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
