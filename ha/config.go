package ha

import (
	"fmt"
	"time"
)

// Role is Apache's BrokerRole (MessageStoreConfig.brokerRole).
type Role int

// Roles, with Apache's names as their text.
const (
	AsyncMaster Role = iota // ASYNC_MASTER: acknowledges before slaves hold the bytes
	SyncMaster              // SYNC_MASTER: acknowledges once a slave holds them
	Slave                   // SLAVE: replicates from a master, refuses writes
)

func (r Role) String() string {
	switch r {
	case AsyncMaster:
		return "ASYNC_MASTER"
	case SyncMaster:
		return "SYNC_MASTER"
	case Slave:
		return "SLAVE"
	}
	return fmt.Sprintf("Role(%d)", int(r))
}

// UnmarshalText accepts Apache's names (broker.conf brokerRole).
func (r *Role) UnmarshalText(b []byte) error {
	switch string(b) {
	case "ASYNC_MASTER":
		*r = AsyncMaster
	case "SYNC_MASTER":
		*r = SyncMaster
	case "SLAVE":
		*r = Slave
	default:
		return fmt.Errorf("brokerRole %q: want ASYNC_MASTER, SYNC_MASTER or SLAVE", b)
	}
	return nil
}

// MarshalText is the name Apache's GET_BROKER_CONFIG shows.
func (r Role) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// Config is the classic-HA part of Apache's MessageStoreConfig; field tags
// hold Apache's keys. Defaults in DefaultConfig are Apache's.
type Config struct {
	BrokerRole Role `key:"brokerRole"`
	// HAListenPort: the master's HA listener; 0 = the remoting listenPort+1
	// (the broker fills it in).
	HAListenPort int `key:"haListenPort"`
	// HAMasterAddress fixes a slave's master HA address ("ip:port"); empty =
	// learned from the name server's registration answer.
	HAMasterAddress         string `key:"haMasterAddress"`
	HASendHeartbeatInterval int    `key:"haSendHeartbeatInterval"` // ms
	HAHousekeepingInterval  int    `key:"haHousekeepingInterval"`  // ms
	HATransferBatchSize     int    `key:"haTransferBatchSize"`     // bytes per frame body
	HASlaveFallbehindMax    int64  `key:"haSlaveFallbehindMax"`    // bytes: a slave further behind is not usable for SYNC_MASTER
	SlaveTimeout            int    `key:"slaveTimeout"`            // ms: SYNC_MASTER wait for a slave's ack

	// HAMaxGapNotInSync is 5.x's name of haSlaveFallbehindMax (a 5.x
	// broker.conf sets this one); FallbehindMax says which applies.
	HAMaxGapNotInSync int64 `key:"haMaxGapNotInSync"`

	// AuthSecret, when set, is the secret a slave proves it holds before a
	// master sends it anything (auth.go); the broker's haAuthSecret. Not a
	// key here: the broker keeps it as a secret that is never printed.
	AuthSecret []byte
}

// DefaultConfig is Apache's defaults.
func DefaultConfig() Config {
	return Config{
		BrokerRole:              AsyncMaster,
		HASendHeartbeatInterval: 5000,
		HAHousekeepingInterval:  20000,
		HATransferBatchSize:     32 * 1024,
		HASlaveFallbehindMax:    256 << 20,
		HAMaxGapNotInSync:       256 << 20,
		SlaveTimeout:            3000,
	}
}

// FallbehindMax is the SYNC_MASTER bound in bytes: haSlaveFallbehindMax
// (4.9's key, whose semantics rocketgo's SYNC_MASTER has), or
// haMaxGapNotInSync when only that one was changed from the default (a 5.x
// broker.conf).
func (c *Config) FallbehindMax() int64 {
	def := DefaultConfig().HASlaveFallbehindMax
	if c.HASlaveFallbehindMax == def && c.HAMaxGapNotInSync != DefaultConfig().HAMaxGapNotInSync {
		return c.HAMaxGapNotInSync
	}
	return c.HASlaveFallbehindMax
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
