// Package stats holds the broker's counters: messages and bytes in per
// topic and out per group and topic, with their rates and Apache's
// StatsItem windows; transactional, timer and pop-revive figures. The send,
// pull, pop, transaction and timer services count into them; the metrics
// endpoint and the admin codes (VIEW_BROKER_STATS_DATA, topic and consume
// stats) read them.
//
// Owns: the counters and their bounded key tables (MaxKeys each: names
// come from clients), the samplers behind rates and windows (RunRates,
// RunItems, run by the broker's lifecycle).
// Never: blocks or allocates on a request path beyond a key's first use;
// reads the store, the tables or the configuration.
package stats
