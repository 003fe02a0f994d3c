// Package pull serves pulls (Apache's PullMessageProcessor and
// DefaultPullMessageResultHandler): the checks in Apache's order, the read
// of one queue as slices of the mapped commit log, the parked long-polling
// pulls and the cold-pull workers that read pages not in memory off the
// event loops.
//
// Owns: the bound on parked pulls (maxParkedPulls) and what a woken pull
// does, the cold-pull queue and workers, CHECK_CLIENT_CONFIG's answer. The
// waiting itself is the store's arrival waiter's (store.Park): it wakes a
// parked pull when its queue grows past the pull's offset or its suspend
// time ends. Never: copies a record to answer (the front end writes the
// slices and releases them), waits on an event loop, or reads the broker's
// configuration beyond Config.
package pull
