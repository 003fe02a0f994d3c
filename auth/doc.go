// Package auth is Apache RocketMQ 5.3's ACL 2.0 for the broker: users
// (authentication) and their access policies (authorization), decided
// before a handler runs exactly as Apache's AuthenticationPipeline and
// AuthorizationPipeline decide it in 5.3.3.
//
// Owns: the User / Acl model with Apache's names (model.go, resource.go,
// action.go), the durable users.json / acls.json in the broker's config
// directory (store.go), the user and ACL edits with Apache's rules and
// remarks (manage.go), source address ranges (ipaddr.go), the signature
// check (authenticate.go), the request code → (resource, actions) table
// of DefaultAuthorizationContextBuilder (requests.go, table.go), the
// policy matcher with AclAuthorizationHandler's entry order (match.go,
// javasort.go), and the processor interceptor (interceptor.go).
//
// Never: edits a handler or reads a broker table; blocks the event loop
// (a decision is map reads, one HMAC and a sort of the few matching
// entries; edits write files and run on the broker's workers); logs a
// password or a signature; compares a signature in variable time.
//
// Design. Apache keeps users and ACLs in two RocksDB directories behind
// Caffeine caches. rocketgo holds both tables in memory as one immutable
// value behind an atomic pointer: an edit copies what it changes, writes
// the file (temp, fsync, rename, fsync dir) and swaps the pointer, so a
// request reads one pointer and never a lock, and a change is in force
// when its answer leaves (Apache invalidates its caches the same way).
//
// A refusal is answered as Apache's pipelines answer an
// AuthenticationException or AuthorizationException: NO_PERMISSION (16)
// with the exception's message as the remark. Authentication runs first
// (BrokerController pipes authorization, then authentication, and the
// last pipe runs first).
package auth
