package broker

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/ha"
)

// The controller keys load under Apache's names; with
// enableControllerMode the role/id check of brokerRole and brokerId is
// off (the controller names them), and the periods are checked.
func TestControllerConfigKeys(t *testing.T) {
	d := DefaultConfig().Controller
	if d.EnableControllerMode || d.SyncBrokerMetadataPeriod != 5000 || d.CheckSyncStateSetPeriod != 5000 ||
		d.SyncControllerMetadataPeriod != 10000 || d.BrokerHeartbeatInterval != 1000 ||
		d.ControllerHeartBeatTimeoutMills != 10000 || d.BrokerElectionPriority != 2147483647 ||
		d.MinInSyncReplicas != 1 || d.AllAckInSyncStateSet || d.HAMaxTimeSlaveNotCatchup != 15000 || d.SyncFromLastFile || d.AsyncLearner {
		t.Fatalf("defaults are not Apache 5.3.3's: %+v", d)
	}
	conf := `brokerName=b
listenPort=10911
brokerIP1=127.0.0.1
brokerRole=SLAVE
brokerId=-1
enableControllerMode=true
controllerAddr=127.0.0.1:9878;127.0.0.1:9868
syncBrokerMetadataPeriod=1000
checkSyncStateSetPeriod=2000
syncControllerMetadataPeriod=3000
brokerHeartbeatInterval=500
controllerHeartBeatTimeoutMills=4000
brokerElectionPriority=3
allAckInSyncStateSet=true
minInSyncReplicas=2
haMaxTimeSlaveNotCatchup=6000
syncFromLastFile=true
asyncLearner=true
`
	p := filepath.Join(t.TempDir(), "broker.conf")
	if err := os.WriteFile(p, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := DefaultConfig()
	if err := LoadConfigFile(p, &cfg, zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	c := cfg.Controller
	if !c.EnableControllerMode || c.ControllerAddr != "127.0.0.1:9878;127.0.0.1:9868" ||
		c.SyncBrokerMetadataPeriod != 1000 || c.CheckSyncStateSetPeriod != 2000 || c.SyncControllerMetadataPeriod != 3000 ||
		c.BrokerHeartbeatInterval != 500 || c.ControllerHeartBeatTimeoutMills != 4000 || c.BrokerElectionPriority != 3 ||
		!c.AllAckInSyncStateSet || c.MinInSyncReplicas != 2 || c.HAMaxTimeSlaveNotCatchup != 6000 || !c.SyncFromLastFile || !c.AsyncLearner {
		t.Fatalf("keys not loaded: %+v", c)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatalf("SLAVE with brokerId -1 in controller mode: %v", err)
	}
	for _, tc := range []struct {
		edit func(*Config)
		want string
	}{
		{func(c *Config) { c.Controller.ControllerAddr = " ; " }, "controllerAddr"},
		{func(c *Config) { c.Controller.BrokerHeartbeatInterval = 0 }, "brokerHeartbeatInterval"},
		{func(c *Config) { c.Controller.SyncBrokerMetadataPeriod = -1 }, "syncBrokerMetadataPeriod"},
		{func(c *Config) { c.Controller.MinInSyncReplicas = 0 }, "minInSyncReplicas"},
		{func(c *Config) { c.Controller.EnableControllerMode = false }, "brokerId > 0"},
	} {
		bad := cfg
		tc.edit(&bad)
		if err := bad.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("want an error naming %s, got %v", tc.want, err)
		}
	}
	if cfg.HA.BrokerRole != ha.Slave {
		t.Fatal("brokerRole not loaded")
	}
}
