package broker

// Controller mode keys: Apache 5.3.3's BrokerConfig controller
// keys and the MessageStoreConfig keys its AutoSwitch HA reads, with
// Apache's names and defaults.

import (
	"fmt"
	"strings"
	"time"
)

// ControllerConfig is the controller-mode part of the configuration.
type ControllerConfig struct {
	// EnableControllerMode: the broker's role and id come from a
	// controller (controllerAddr), not from brokerRole and brokerId.
	EnableControllerMode bool `key:"enableControllerMode"`
	// ControllerAddr is the controllers' Remoting addresses, ';'-separated.
	ControllerAddr string `key:"controllerAddr"`
	// SyncBrokerMetadataPeriod (ms): the replica info poll (1004).
	SyncBrokerMetadataPeriod int64 `key:"syncBrokerMetadataPeriod"`
	// CheckSyncStateSetPeriod (ms): how often a master checks its
	// SyncStateSet for slaves to drop when no ack comes (AutoSwitch HA).
	CheckSyncStateSetPeriod int64 `key:"checkSyncStateSetPeriod"`
	// SyncControllerMetadataPeriod (ms): how often the controller leader is
	// looked up again (1005).
	SyncControllerMetadataPeriod int64 `key:"syncControllerMetadataPeriod"`
	// BrokerHeartbeatInterval (ms): heartbeats (904) to every controller.
	BrokerHeartbeatInterval int64 `key:"brokerHeartbeatInterval"`
	// ControllerHeartBeatTimeoutMills (ms): what the heartbeat asks the
	// controllers to wait before they call the broker dead.
	ControllerHeartBeatTimeoutMills int64 `key:"controllerHeartBeatTimeoutMills"`
	// BrokerElectionPriority: lower is preferred in an election.
	BrokerElectionPriority int32 `key:"brokerElectionPriority"`
	// SendHeartbeatTimeoutMillis (ms): the wait for a controller's
	// connection when a heartbeat is sent.
	SendHeartbeatTimeoutMillis int64 `key:"sendHeartbeatTimeoutMillis"`

	// MessageStoreConfig keys the AutoSwitch HA service reads.
	AllAckInSyncStateSet bool `key:"allAckInSyncStateSet"`
	MinInSyncReplicas    int  `key:"minInSyncReplicas"`
	// InSyncReplicas: how many replicas, the master included, a
	// SYNC_MASTER send waits for (1: the master alone); -1, or
	// allAckInSyncStateSet, every member of the SyncStateSet.
	InSyncReplicas           int   `key:"inSyncReplicas"`
	HAMaxTimeSlaveNotCatchup int64 `key:"haMaxTimeSlaveNotCatchup"` // ms
	// SyncFromLastFile: an empty slave starts copying at the master's
	// last commit log file, not its first.
	SyncFromLastFile bool `key:"syncFromLastFile"`
	// AsyncLearner: the slave copies but never joins the SyncStateSet
	// (so it is never elected, unless enableElectUncleanMaster).
	AsyncLearner bool `key:"asyncLearner"`
	// HAFlowControlEnable bounds what a master sends each slave per
	// second to MaxHATransferByteInSecond.
	HAFlowControlEnable       bool  `key:"haFlowControlEnable"`
	MaxHATransferByteInSecond int64 `key:"maxHaTransferByteInSecond"`
}

// defaultControllerConfig is Apache 5.3.3's defaults.
func defaultControllerConfig() ControllerConfig {
	return ControllerConfig{
		SyncBrokerMetadataPeriod:        5000,
		CheckSyncStateSetPeriod:         5000,
		SyncControllerMetadataPeriod:    10000,
		BrokerHeartbeatInterval:         1000,
		ControllerHeartBeatTimeoutMills: 10000,
		BrokerElectionPriority:          1<<31 - 1, // Integer.MAX_VALUE
		SendHeartbeatTimeoutMillis:      1000,
		MinInSyncReplicas:               1,
		InSyncReplicas:                  1,
		HAMaxTimeSlaveNotCatchup:        15000,
		MaxHATransferByteInSecond:       100 << 20,
	}
}

// validate checks the keys in controller mode; off, they are not read.
// Apache reads the periods unchecked; a zero or negative one would make
// its scheduler throw at start, so it is refused here.
func (c *ControllerConfig) validate() error {
	if !c.EnableControllerMode {
		return nil
	}
	if strings.Trim(c.ControllerAddr, "; ") == "" {
		return fmt.Errorf("broker: enableControllerMode needs controllerAddr")
	}
	for _, p := range []struct {
		key string
		v   int64
	}{
		{"syncBrokerMetadataPeriod", c.SyncBrokerMetadataPeriod},
		{"checkSyncStateSetPeriod", c.CheckSyncStateSetPeriod},
		{"syncControllerMetadataPeriod", c.SyncControllerMetadataPeriod},
		{"brokerHeartbeatInterval", c.BrokerHeartbeatInterval},
		{"controllerHeartBeatTimeoutMills", c.ControllerHeartBeatTimeoutMills},
		{"sendHeartbeatTimeoutMillis", c.SendHeartbeatTimeoutMillis},
		{"haMaxTimeSlaveNotCatchup", c.HAMaxTimeSlaveNotCatchup},
	} {
		if p.v <= 0 {
			return fmt.Errorf("broker: %s %d must be positive", p.key, p.v)
		}
	}
	if c.HAFlowControlEnable && c.MaxHATransferByteInSecond <= 0 {
		return fmt.Errorf("broker: maxHaTransferByteInSecond %d must be positive", c.MaxHATransferByteInSecond)
	}
	if c.MinInSyncReplicas < 1 {
		return fmt.Errorf("broker: minInSyncReplicas %d must be at least 1", c.MinInSyncReplicas)
	}
	return nil
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }
