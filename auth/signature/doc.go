// Package signature is the signature Apache RocketMQ's clients put on a
// Remoting request (AclClientRPCHook, AclSigner) and ACL 2.0's check of it
// (DefaultAuthenticationHandler), with Apache's messages.
//
// Owns: Sign and Signer (HMAC-SHA1, Base64, over the extFields' values
// but Signature, ordered by key, then the body), Key (a password whose
// signers are pooled) and Authenticate (AccessKey present, user known and
// enabled, signature right, each refusal with Apache's message).
//
// Never: imports what a server is made of (broker, store, processor): the
// broker's ACLs (packages acl and auth), the name server and the
// controller all check with it, and mqnamesrv links no broker code.
// Never logs a password or a signature; never compares a signature in
// variable time.
package signature
