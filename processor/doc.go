// Package processor holds the broker's handlers, one per Remoting request code
// (or family), and the table that dispatches to them. The name server's
// handlers live in namesrv, so that mqnamesrv links no broker package.
//
// Owns: decoding and validating request headers, building response headers and
// bodies, mapping errors to response codes (errors.go).
// Never: touches files; keeps state beyond one request (state lives in broker
// and store); blocks the event loop it runs on.
package processor
