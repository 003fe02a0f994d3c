// Package proxy serves Apache RocketMQ's gRPC MessagingService
// (apache.rocketmq.v2) for the 5.x SDKs and maps it onto brokers.
//
// Owns: the gRPC server and its listener, the gRPC clients seen (their
// settings and telemetry streams), the transaction data needed to end a
// half message a gRPC producer sent, and — in cluster mode — the Remoting
// connections to name servers and brokers (routes, sends, heartbeats of
// transactional producer groups, CHECK_TRANSACTION_STATE relayed to a
// client's telemetry stream as RecoverOrphanedTransactionCommand and
// NOTIFY_UNSUBSCRIBE_LITE as NotifyUnsubscribeLiteCommand); lite topics
// (lite.go): subscriptions pushed to every broker of the topic
// (LITE_SUBSCRIPTION_CTL) and pops by client (POP_LITE_MESSAGE).
//
// Never: re-implements a broker rule (checks, queues, offsets are the
// broker's answers, translated once in status.go); blocks a Remoting
// connection's reader (broker requests are handed to a worker); keeps
// anything a client can grow without a bound (clients, transaction data,
// message sizes, the bytes of sends in flight, streams, connections,
// telemetry commands all have one);
// holds a lock across a write to a client's stream (a telemetry stream has
// one writer, its handler, fed through a bounded queue); lets a connection
// sit in its TLS handshake or HTTP/2 preface past grpcHandshakeTimeoutMillis.
//
// Goroutines: the gRPC server's, the broker heartbeat loop and the
// transaction-data sweeper; started by Start, stopped and awaited by
// Shutdown.
package proxy
