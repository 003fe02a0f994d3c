package acl

import (
	"crypto/hmac"
	"crypto/sha1"
	"crypto/subtle"
	"encoding/base64"
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
	m := hmac.New(sha1.New, secret)
	var scratch [32]int
	for _, i := range signedFields(scratch[:0], req, skip) {
		_, _ = m.Write([]byte(req.ExtFields[i].Value)) // hash.Hash never fails
	}
	_, _ = m.Write(req.Body)
	var sum [sha1.Size]byte
	return base64.StdEncoding.AppendEncode(dst, m.Sum(sum[:0]))
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

// verify checks req's Signature against secret in constant time, first as
// the Java client signs, then without SecurityToken (the Go client adds it
// unsigned) and without _UNIQUE_KEY_QUERY (clients before 4.9.4 add it
// after signing), each only when present.
func verify(secret []byte, req *remoting.Command, sig string) bool {
	var buf [64]byte
	try := func(skip ...string) bool {
		return subtle.ConstantTimeCompare(Sign(buf[:0], secret, req, skip...), []byte(sig)) == 1
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
