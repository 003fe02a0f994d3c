// Package acl is Apache RocketMQ's ACL 1.0 (plain_acl.yml, aclEnable) for
// the broker: it decides, before a handler runs, whether a request may be
// served, exactly as Apache's PlainAccessValidator and
// PlainPermissionManager decide it in 5.3.1, the newest release with ACL
// 1.0 running (4.9.8 differs in two points: see Account.checkPerm).
//
// Owns: the plain_acl.yml model and parser (plainfile.go), Apache's address
// patterns (address.go), the permission bits (perm.go), the request code →
// (resource, permission) table (resource.go), the signature check with
// the clients' variants (sign.go; the signature itself is package
// auth/signature's), the decision (check.go), loading and reloading the
// files (files.go), and the processor interceptor (interceptor.go).
//
// Never: edits a handler or reads a broker table; blocks the event loop
// (a decision is map reads and at most four HMACs, the file is re-read by
// its own goroutine); logs a secret key or a signature; compares a
// signature in variable time.
//
// Design. A plain_acl.yml set (the default file plus conf/acl/**.yml, as
// PlainPermissionManager.load reads them) becomes an immutable *Rules;
// Files swaps it through an atomic pointer when a file changes (polled,
// as Apache's AclFileWatchService), so a request reads one pointer and
// never a lock. A file that fails to parse keeps the rules in force and
// logs why. The order of Apache's validate is kept because it decides
// which error a client sees: global white address (allow all), access
// key present, key known, account white address (allow all, no
// signature), signature, trace topic, admin codes, resource permissions.
//
// A refusal is answered as Apache's RPC hook answers an AclException:
// SYSTEM_ERROR (1) with the remark "org.apache.rocketmq.acl.common.
// AclException: <message>, <first stack frame>" (5.3.1's frames), not
// NO_PERMISSION: the hook throws, NettyRemotingAbstract catches it.
// compat-tests' differential run checks the remarks against 5.3.1's.
//
// Signature. The clients sign HMAC-SHA1 (Base64) over the values of every
// extField except Signature, ordered by key, then the body. Two client
// behaviours are accepted besides: the Go client adds SecurityToken
// without signing it, and clients before 4.9.4 add _UNIQUE_KEY_QUERY
// after signing; a signature that fails is tried again without each (at
// most four HMACs, only on the failure path).
//
// Goroutines: Files.Run's poller, stopped by its context.
package acl
