// Package tables holds the broker's state: the topic table, the
// subscription groups with their forbidden table, the consumer offsets
// (with pending resets), the clients (producers, consumers, their
// subscriptions), the orderly locks and the filter expression caches, and
// the JSON files of the first three in Apache's shapes (topics.json,
// subscriptionGroup.json, consumerOffset.json).
//
// Owns: each table's invariants (names that passed message's rules, queue
// counts in bounds, values never mutated after insertion) and its file.
// Never: starts goroutines (the broker's loops call Expire and
// PersistIfDirty), reads the broker's configuration (a constructor takes
// what may change at runtime as a func), touches the store or the network,
// or decides whether a request is allowed: that is the services' (package
// broker), which call these tables.
package tables
