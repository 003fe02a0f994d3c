// Package remoting speaks Apache RocketMQ's Remoting protocol: frames, the
// Command they carry, both header serializations (JSON and ROCKETMQ binary),
// request and response codes, a gnet event-loop server, a client, and an
// in-process connection (Local) through which a component of the same
// process calls a Handler without a socket.
//
// Owns: frame and header codecs, Command, codes, Server, Conn, Client, Local,
// TLS (Apache's tls.* settings; tls.go) and its termination before the
// event loops (tls_accept.go); Refusal, a request refused with a code and
// its remark, and DataVersion, the version every replicated table carries.
// Never: knows what a topic, a queue or a broker is; blocks an event loop.
//
// Frame layout (all integers big-endian):
//
//	+--------+----------------------+-----------+------+
//	| length | type<<24 | headerLen | header    | body |
//	| int32  | int32                | headerLen | rest |
//	+--------+----------------------+-----------+------+
//
// length counts everything after itself; type is 0 (JSON) or 1 (ROCKETMQ).
//
// Invariants:
//   - A response carries the request's opaque and serialize type and has flag bit 0 set.
//   - Bytes handed out by gnet are copied before OnTraffic returns. A request
//     the server decodes is pooled and recycled when its handler returns; its
//     header strings live in the connection's text arena and may be kept
//     (pool.go). A response from NewResponse is recycled once written.
//   - Handlers run on the event loop and must not block; late answers go through
//     Conn.Reply, which uses the loop's asynchronous write.
//   - Everything a client can make the server hold is bounded (Limits):
//     connections, input read and not yet served (kept in the connection's
//     own buffer, never in gnet's, and charged to one budget), output not yet
//     sent (above the high-water mark the connection's requests are not
//     read), header bytes and fields. Crossing a bound closes or refuses the
//     connection with a sampled log line and records why
//     (Conn.ClosedByServer), or answers the request with an error.
//   - A resource error at accept (EMFILE, ENFILE, ENOBUFS, ENOMEM) never stops
//     the server: it sheds the pending connection and backs off.
//   - With TLS disabled, accepting is untouched. In permissive and enforcing
//     mode a connection's first byte and handshake are awaited off the
//     accept loop, within the handshake timeout, counted against the
//     connection limit; a TLS connection reaches the loops over a socket
//     pair, its Conn keeping the client's address.
//
// Goroutines: the gnet engine, the accept loop and the sweeper (idle and
// incomplete-frame limits, the clock), all started by Server.Start and
// stopped by Server.Shutdown; with TLS, one per connection awaiting its
// first byte or handshake and two per TLS connection (the bridge), closed
// and awaited by Shutdown; one reader per client connection (Client,
// closed by Client.Close).
package remoting
