// Package metrics serves a broker's figures on a Prometheus endpoint with
// Apache RocketMQ 5.x's metric names and labels (BrokerMetricsManager,
// RemotingMetricsManager, DefaultStoreMetricsManager), through
// prometheus/client_golang.
//
// Owns: the registry, the HTTP listener (metricsPromExporterHost/Port), the
// request-latency interceptor, and a collector that reads the broker's
// counters and tables when scraped.
//
// Never: adds work to a send or a pull beyond what broker.Stats already
// counts (two atomic adds) and one histogram observation per request in
// the interceptor; keeps a label set a client can grow without a bound
// (topics and groups come from broker.Stats, which bounds its keys; request
// codes from a fixed table plus the codes seen, bounded).
//
// Goroutines: the HTTP server's, started by Start and stopped by Shutdown.
package metrics
