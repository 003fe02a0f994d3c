// Package metrics serves a broker's figures on a Prometheus endpoint with
// Apache RocketMQ 5.x's metric names and labels (BrokerMetricsManager,
// RemotingMetricsManager, DefaultStoreMetricsManager), through
// prometheus/client_golang.
//
// Owns: the registry, the HTTP listener (metricsPromExporterHost/Port), the
// request-latency interceptor (which also times topic and group creation),
// and a collector that reads what it is handed (Source: the tables, the
// store, the counters) when scraped (consumer.go computes the consumer
// gauges as Apache's ConsumerLagCalculator, lite.go the lite groups' as
// Apache 5.5's LiteConsumerLagCalculator). It links no broker service.
//
// Never: adds work to a send or a pull beyond what stats.Stats counts (a
// map read and four atomic adds per pull answer; six per send, the size
// histogram's two included, and a scan of its properties for the sharding
// key) and one
// histogram observation per request in the interceptor; holds a broker
// lock across a store read at scrape (the consumer gauges read at most
// maxLagQueues queues per scrape); keeps a label set a client can grow
// without a bound (topics and groups come from stats.Stats, TxStats and
// TimerStats, which bound their keys; the lite rows' from the groups and
// parent topics of the LMQ offsets, whose groups must exist; request codes
// from a fixed table plus the codes seen, bounded).
//
// Goroutines: the HTTP server's, started by Start and stopped by Shutdown.
package metrics
