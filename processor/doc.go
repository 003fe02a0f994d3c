// Package processor holds one handler per Remoting request code (or family),
// for both the name server and the broker, and the table that dispatches to them.
//
// Owns: decoding and validating request headers, building response headers and
// bodies, mapping errors to response codes (errors.go).
// Never: touches files; keeps state beyond one request (state lives in namesrv,
// broker and store); blocks the event loop it runs on.
package processor
