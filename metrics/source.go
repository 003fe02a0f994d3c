package metrics

import (
	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/store"
)

// Config is what the endpoint takes of the broker's configuration at
// start (Apache's metrics* keys and the labels' names).
type Config struct {
	ExporterType   string // metricsExporterType: the endpoint runs for PROM only
	Label          string // metricsLabel, "k:v,k:v"
	Host           string // metricsPromExporterHost; empty: BrokerIP1
	Port           int    // metricsPromExporterPort
	MaxConnections int    // metricsPromExporterMaxConnections
	Cluster        string // brokerClusterName
	BrokerName     string
	BrokerIP1      string
}

// Source is what the endpoint reads of a broker at each scrape: its
// tables, store and counters, and the few figures only the broker knows.
// Nothing in it is written by the endpoint.
type Source struct {
	Store   *store.Store
	Topics  *tables.Topics
	Groups  *tables.Groups
	Offsets *tables.Offsets
	Clients *tables.Clients
	Stats   *stats.Stats
	Tx      *stats.TxStats
	Timer   *stats.TimerStats
	Revive  *stats.PopStats
	LiteLag *stats.LiteLag

	StoreRoot  string // storePathRootDir, whose disk is reported
	TimerWheel bool   // timerWheelEnable: the timer metrics exist only then
	// Permission is the broker's permission now (an admin may change it).
	Permission func() int32
	// TimerTiming is the messages waiting in the timer per real topic (a
	// slave's: its master's at the last sync).
	TimerTiming func() map[string]int64
	// EachPopInFlight calls fn for each queue's messages popped and not
	// acknowledged.
	EachPopInFlight func(fn func(group, topic string, queueID int32, n int64))
	// LiteLagEnabled is liteLagCountMetricsEnable and
	// liteLagLatencyMetricsEnable in force (nil: both off).
	LiteLagEnabled func() (count, latency bool)
}
