package broker

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/store"
)

// ErrConfigBlackListed is the answer to UPDATE_BROKER_CONFIG for a key Apache
// refuses to change at runtime (configBlackList).
var ErrConfigBlackListed = errors.New("broker: config key in black list")

// configBlackList is Apache's default configBlackList.
var configBlackList = []string{"brokerConfigPath", "rocketmqHome", "configBlackList"}

// RuntimeConfig is the broker configuration as GET_BROKER_CONFIG reports it
// and UPDATE_BROKER_CONFIG changes it. The running broker keeps the values it
// started with: an update is validated, recorded and reported, and takes
// effect when the broker is started with it.
type RuntimeConfig struct {
	mu      sync.Mutex
	cfg     Config
	version DataVersion
}

// NewRuntimeConfig starts from the configuration the broker runs with.
func NewRuntimeConfig(cfg Config) *RuntimeConfig {
	return &RuntimeConfig{cfg: cfg, version: DataVersion{Timestamp: time.Now().UnixMilli()}}
}

// Properties returns the configuration as Java properties text (key=value
// lines, the body of GET_BROKER_CONFIG) and its data version.
func (rc *RuntimeConfig) Properties() ([]byte, DataVersion) {
	rc.mu.Lock()
	cfg, v := rc.cfg, rc.version
	rc.mu.Unlock()
	var b bytes.Buffer
	for _, kv := range config.Pairs(&cfg) {
		b.WriteString(kv[0])
		b.WriteByte('=')
		b.WriteString(kv[1])
		b.WriteByte('\n')
	}
	return b.Bytes(), v
}

// Update applies properties text (UPDATE_BROKER_CONFIG's body) all or nothing.
func (rc *RuntimeConfig) Update(body []byte) error {
	pairs, err := config.ReadProperties(bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("update broker config: %w", err)
	}
	rc.mu.Lock()
	defer rc.mu.Unlock()
	next := rc.cfg
	for _, kv := range pairs {
		for _, k := range configBlackList {
			if kv[0] == k {
				return fmt.Errorf("can not update config in black list: %s: %w", k, ErrConfigBlackListed)
			}
		}
		if err := config.Set(&next, kv[0], strings.TrimSpace(kv[1])); err != nil {
			return fmt.Errorf("update broker config %s=%s: %w", kv[0], kv[1], err)
		}
	}
	if err := next.Validate(); err != nil {
		return fmt.Errorf("update broker config: %w", err)
	}
	rc.cfg = next
	rc.version.next()
	return nil
}

// RuntimeStats derives GET_BROKER_RUNTIME_INFO's counters from the store: the
// messages put are the sum of every queue's max offset, the put TPS the rate
// between two successive requests.
type RuntimeStats struct {
	mu       sync.Mutex
	lastPut  int64
	lastAt   time.Time
	putTps   float64
	started  time.Time
	putStart int64
}

// NewRuntimeStats samples st once, so the first report has a base.
func NewRuntimeStats(st *store.Store) *RuntimeStats {
	now := time.Now()
	n := totalPut(st)
	return &RuntimeStats{lastPut: n, lastAt: now, started: now, putStart: n}
}

func totalPut(st *store.Store) int64 {
	var n int64
	for t, qs := range st.Topics() {
		for _, q := range qs {
			n += st.MaxOffset(t, q)
		}
	}
	return n
}

// Sample returns the messages stored in total, those stored since start-up,
// and the put rate since the previous sample (at least a second apart).
func (rs *RuntimeStats) Sample(st *store.Store) (total, sinceStart int64, putTps float64) {
	now := time.Now()
	n := totalPut(st)
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if d := now.Sub(rs.lastAt); d >= time.Second {
		rs.putTps = float64(n-rs.lastPut) / d.Seconds()
		rs.lastPut, rs.lastAt = n, now
	}
	return n, n - rs.putStart, rs.putTps
}
