package controller

import (
	"math"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

// defaultHeartbeatTimeout is DEFAULT_BROKER_CHANNEL_EXPIRED_TIME (10 s), for
// heartbeats that carry no heartbeatTimeoutMills.
const defaultHeartbeatTimeout = 10 * time.Second

// brokerKey is Apache's BrokerIdentityInfo.
type brokerKey struct {
	cluster, brokerName string
	id                  int64
}

// liveInfo is Apache's BrokerLiveInfo: what the last heartbeat said.
type liveInfo struct {
	brokerName    string
	addr          string
	id            int64
	last          time.Time
	timeout       time.Duration
	conn          *remoting.Conn
	epoch         int32
	maxOffset     int64
	confirmOffset int64
	priority      int32
}

// heartbeat carries BROKER_HEARTBEAT's fields; nil pointers are absent
// fields (Apache's nulls and their defaults).
type heartbeat struct {
	Cluster, BrokerName, BrokerAddr string
	BrokerID                        int64
	Epoch                           *int32
	MaxOffset, ConfirmOffset        *int64
	TimeoutMillis                   *int64
	ElectionPriority                *int32
}

// Heartbeats is the in-memory broker liveness table of one controller
// (Apache's DefaultBrokerHeartbeatManager). It is not replicated: every
// controller receives every broker's heartbeats.
type Heartbeats struct {
	mu   sync.Mutex
	live map[brokerKey]*liveInfo
	max  int // entries (controllerMaxHeartbeats); 0: unbounded
	now  func() time.Time
}

// NewHeartbeats returns an empty table of at most max brokers (0: no bound).
func NewHeartbeats(max int) *Heartbeats {
	return &Heartbeats{live: map[brokerKey]*liveInfo{}, max: max, now: time.Now}
}

// onHeartbeat records a heartbeat (onBrokerHeartbeat). A known broker's epoch
// and offsets move only forward: (epoch, maxOffset) must grow. It reports
// false, recording nothing, for a new broker when the table is full.
func (h *Heartbeats) onHeartbeat(hb heartbeat, c *remoting.Conn) bool {
	epoch := deref32(hb.Epoch, -1)
	maxOffset := deref64(hb.MaxOffset, -1)
	confirm := deref64(hb.ConfirmOffset, -1)
	timeout := defaultHeartbeatTimeout
	if hb.TimeoutMillis != nil {
		timeout = time.Duration(*hb.TimeoutMillis) * time.Millisecond
	}
	prio := deref32(hb.ElectionPriority, math.MaxInt32)
	k := brokerKey{hb.Cluster, hb.BrokerName, hb.BrokerID}
	h.mu.Lock()
	defer h.mu.Unlock()
	prev := h.live[k]
	if prev == nil {
		if h.max > 0 && len(h.live) >= h.max {
			return false
		}
		// Apache's first heartbeat keeps no confirm offset (the constructor
		// it calls leaves it 0).
		h.live[k] = &liveInfo{brokerName: hb.BrokerName, addr: hb.BrokerAddr, id: hb.BrokerID, last: h.now(),
			timeout: timeout, conn: c, epoch: epoch, maxOffset: maxOffset, priority: prio}
		return true
	}
	prev.last = h.now()
	prev.timeout = timeout
	prev.priority = prio
	if epoch > prev.epoch || epoch == prev.epoch && maxOffset > prev.maxOffset {
		prev.epoch, prev.maxOffset, prev.confirmOffset = epoch, maxOffset, confirm
	}
	return true
}

// active is isBrokerActive: a heartbeat within its timeout.
func (h *Heartbeats) active(cluster, brokerName string, id int64) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	li := h.live[brokerKey{cluster, brokerName, id}]
	return li != nil && !li.last.Add(li.timeout).Before(h.now())
}

// info returns a copy of a broker's live info, or false.
func (h *Heartbeats) info(cluster, brokerName string, id int64) (liveInfo, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	li := h.live[brokerKey{cluster, brokerName, id}]
	if li == nil {
		return liveInfo{}, false
	}
	return *li, true
}

// expire removes brokers whose heartbeat timed out (scanNotActiveBroker) and
// returns them; the caller closes their connections and reports them
// inactive.
func (h *Heartbeats) expire() []liveExpired {
	h.mu.Lock()
	defer h.mu.Unlock()
	now := h.now()
	var out []liveExpired
	for k, li := range h.live {
		if now.Sub(li.last) > li.timeout {
			delete(h.live, k)
			out = append(out, liveExpired{key: k, conn: li.conn})
		}
	}
	return out
}

// liveExpired is one broker dropped from the table.
type liveExpired struct {
	key  brokerKey
	conn *remoting.Conn
}

// connClosed drops the broker whose heartbeats came on c
// (onBrokerChannelClose), reporting it; Apache drops only the first match.
func (h *Heartbeats) connClosed(c *remoting.Conn) (brokerKey, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for k, li := range h.live {
		if li.conn == c {
			delete(h.live, k)
			return k, true
		}
	}
	return brokerKey{}, false
}

func deref32(p *int32, def int32) int32 {
	if p == nil {
		return def
	}
	return *p
}

func deref64(p *int64, def int64) int64 {
	if p == nil {
		return def
	}
	return *p
}
