// Package pull serves pulls (Apache's PullMessageProcessor and
// DefaultPullMessageResultHandler): the checks in Apache's order, the read
// of one queue as slices of the mapped commit log, the parked long-polling
// pulls and the cold-pull workers that read pages not in memory off the
// event loops.
//
// Owns: Holds, the cold-pull queue and workers, CHECK_CLIENT_CONFIG's
// answer. Never: copies a record to answer (the front end writes the
// slices and releases them), waits on an event loop, or reads the broker's
// configuration beyond Config.
package pull
