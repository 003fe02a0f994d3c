package controller

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/remoting"
)

// Config holds Apache ControllerConfig's keys that rocketgo honours, plus
// rocketgo's raft keys. Field tags carry the exact key names.
type Config struct {
	// ControllerDLegerGroup names the controller group (GET_METADATA_INFO's group).
	ControllerDLegerGroup string `key:"controllerDLegerGroup"`
	// ControllerDLegerPeers lists the controllers, "n0-127.0.0.1:9878;n1-…":
	// each address is where that controller answers Remoting requests
	// (brokers' controllerAddr). Its raft transport listens on the same host
	// at port + ControllerRaftPortOffset.
	ControllerDLegerPeers string `key:"controllerDLegerPeers"`
	// ControllerDLegerSelfID is this controller's id in the peer list.
	ControllerDLegerSelfID string `key:"controllerDLegerSelfId"`
	// ControllerStorePath holds the raft log, stable store and snapshots;
	// Apache's default "" means ~/DledgerController.
	ControllerStorePath string `key:"controllerStorePath"`
	// EnableElectUncleanMaster lets an election pick a replica outside the
	// SyncStateSet when no member of it is alive.
	EnableElectUncleanMaster bool `key:"enableElectUncleanMaster"`
	// NotifyBrokerRoleChanged pushes NOTIFY_BROKER_ROLE_CHANGED to the
	// active brokers of a set after an election.
	NotifyBrokerRoleChanged bool `key:"notifyBrokerRoleChanged"`
	// ScanNotActiveBrokerInterval is the heartbeat expiry scan period (ms).
	ScanNotActiveBrokerInterval int64 `key:"scanNotActiveBrokerInterval"`
	// ScanInactiveMasterInterval is the leader's scan for broker sets whose
	// master is inactive (ms).
	ScanInactiveMasterInterval int64 `key:"scanInactiveMasterInterval"`
	// ElectMasterMaxRetryCount bounds the elections one inactive master triggers.
	ElectMasterMaxRetryCount int `key:"electMasterMaxRetryCount"`
	// ControllerThreadPoolNums is the number of request workers.
	ControllerThreadPoolNums int `key:"controllerThreadPoolNums"`
	// ConfigStorePath is where UPDATE_CONTROLLER_CONFIG writes the whole
	// configuration in force, as properties (Apache's Configuration.persist);
	// "" means Apache's default, ~/controller/controller.properties.
	ConfigStorePath string `key:"configStorePath"`
	// ConfigBlackList lists the keys UPDATE_CONTROLLER_CONFIG may not change
	// (';'-separated; configBlackList, configStorePath and rocketmqHome
	// always).
	ConfigBlackList string `key:"configBlackList"`
	// BindAddress is the address the Remoting port listens on (Apache's
	// NettyServerConfig key). "" (the default) binds this controller's own
	// peer host from controllerDLegerPeers, so a controller whose peers are
	// loopback addresses is not reachable from other hosts; "0.0.0.0"
	// binds every interface, as Apache's controller does.
	BindAddress string `key:"bindAddress"`
	// ControllerRequestThreadPoolQueueCapacity bounds the requests waiting
	// for a worker; past it requests are answered SYSTEM_BUSY.
	ControllerRequestThreadPoolQueueCapacity int `key:"controllerRequestThreadPoolQueueCapacity"`

	// ACL 2.0 on the controller (rocketgo's; Apache's controller has none),
	// with the broker's key names. See auth.go.

	// AuthenticationEnabled: every request but a heartbeat from a known
	// broker must be signed by a user of the controllers.
	AuthenticationEnabled bool `key:"authenticationEnabled"`
	// AuthorizationEnabled: only a Super user may change the controllers'
	// metadata (register, elect, alter the SyncStateSet); a Normal user
	// reads.
	AuthorizationEnabled bool `key:"authorizationEnabled"`
	// InitAuthenticationUser, {"username":..,"password":..}, is a Super
	// user the leader adds to the replicated users when absent.
	InitAuthenticationUser config.Secret `key:"initAuthenticationUser"`
	// InnerClientAuthenticationCredentials, {"accessKey":..,"secretKey":..},
	// is added as a Super user likewise and signs the controller's own
	// requests (NOTIFY_BROKER_ROLE_CHANGED); give the brokers the same key.
	InnerClientAuthenticationCredentials config.Secret `key:"innerClientAuthenticationCredentials"`

	// rocketgo's bounds (Apache has none): what a client can grow.

	// ControllerMaxBrokerSets bounds the broker sets registered; an id
	// applied for in one more is refused CONTROLLER_BROKER_ID_INVALID.
	ControllerMaxBrokerSets int `key:"controllerMaxBrokerSets"`
	// ControllerMaxReplicasPerSet bounds the broker ids of one set, likewise.
	ControllerMaxReplicasPerSet int `key:"controllerMaxReplicasPerSet"`
	// ControllerMaxHeartbeats bounds the heartbeat table; a heartbeat from
	// one more broker is refused CONTROLLER_INVALID_REQUEST.
	ControllerMaxHeartbeats int `key:"controllerMaxHeartbeats"`

	// rocketgo's raft keys (no Apache equivalent: DLedger has its own).

	// ControllerRaftPortOffset: a controller's raft transport port is its
	// Remoting port plus this.
	ControllerRaftPortOffset int `key:"controllerRaftPortOffset"`
	// ControllerRaftHeartbeatTimeoutMillis and ControllerRaftElectionTimeoutMillis
	// are raft's follower and candidate timeouts; they bound how long the
	// controllers stay leaderless after their leader dies.
	ControllerRaftHeartbeatTimeoutMillis int64 `key:"controllerRaftHeartbeatTimeoutMillis"`
	ControllerRaftElectionTimeoutMillis  int64 `key:"controllerRaftElectionTimeoutMillis"`
	// ControllerRaftSnapshotThreshold is the number of log entries between snapshots.
	ControllerRaftSnapshotThreshold uint64 `key:"controllerRaftSnapshotThreshold"`

	// Limits bound the Remoting server's connections and frames.
	Limits remoting.Limits
	// Version is reportedVersion: what the controller reports as its
	// version.
	Version remoting.Reported
	// TLS is built from -Dtls.* arguments and tls.config.file, not from
	// this file (Apache reads them as system properties); nil: plaintext.
	TLS *remoting.TLS
}

// DefaultConfig returns Apache's ControllerConfig defaults and rocketgo's
// raft defaults.
func DefaultConfig() Config {
	return Config{
		ControllerDLegerGroup:                    "",
		ControllerStorePath:                      "",
		NotifyBrokerRoleChanged:                  true,
		ConfigBlackList:                          "configBlackList;configStorePath",
		ScanNotActiveBrokerInterval:              5000,
		ScanInactiveMasterInterval:               5000,
		ElectMasterMaxRetryCount:                 3,
		ControllerThreadPoolNums:                 16,
		ControllerRequestThreadPoolQueueCapacity: 50000,
		ControllerMaxBrokerSets:                  10000,
		ControllerMaxReplicasPerSet:              128,
		ControllerMaxHeartbeats:                  65536,
		ControllerRaftPortOffset:                 1,
		ControllerRaftHeartbeatTimeoutMillis:     1000,
		ControllerRaftElectionTimeoutMillis:      1000,
		ControllerRaftSnapshotThreshold:          8192,
		Limits:                                   remoting.DefaultLimits(),
		Version:                                  remoting.DefaultReported(),
	}
}

// Peer is one controller of the group.
type Peer struct {
	ID   string // "n0"
	Addr string // Remoting address, host:port
	Raft string // raft transport address, host:port+offset
}

// Peers parses ControllerDLegerPeers. Entries are "id-host:port" separated
// by ';' (DLedger's format).
func (c Config) Peers() ([]Peer, error) {
	var out []Peer
	seen := map[string]bool{}
	for _, e := range strings.Split(c.ControllerDLegerPeers, ";") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		id, addr, ok := strings.Cut(e, "-")
		if !ok || id == "" || addr == "" {
			return nil, fmt.Errorf("controller: peer %q: want id-host:port", e)
		}
		host, port, err := net.SplitHostPort(addr)
		if err != nil {
			return nil, fmt.Errorf("controller: peer %q: %w", e, err)
		}
		p, err := strconv.Atoi(port)
		if err != nil || p <= 0 || p+c.ControllerRaftPortOffset > 65535 {
			return nil, fmt.Errorf("controller: peer %q: bad port", e)
		}
		if seen[id] {
			return nil, fmt.Errorf("controller: peer id %s listed twice", id)
		}
		seen[id] = true
		out = append(out, Peer{ID: id, Addr: addr, Raft: net.JoinHostPort(host, strconv.Itoa(p+c.ControllerRaftPortOffset))})
	}
	if len(out) == 0 {
		return nil, errors.New("controller: controllerDLegerPeers is empty")
	}
	return out, nil
}

// Validate checks what Apache's ControllerManager.initialize checks, and the
// bounds rocketgo needs.
func (c Config) Validate() error {
	peers, err := c.Peers()
	if err != nil {
		return err
	}
	if c.ControllerDLegerSelfID == "" {
		return errors.New("controller: controllerDLegerSelfId is empty")
	}
	found := false
	for _, p := range peers {
		found = found || p.ID == c.ControllerDLegerSelfID
	}
	if !found {
		return fmt.Errorf("controller: controllerDLegerSelfId %s is not in controllerDLegerPeers", c.ControllerDLegerSelfID)
	}
	if c.ControllerRaftPortOffset == 0 {
		return errors.New("controller: controllerRaftPortOffset must not be 0: the raft transport needs its own port")
	}
	if c.ScanNotActiveBrokerInterval <= 0 || c.ScanInactiveMasterInterval <= 0 {
		return errors.New("controller: scan intervals must be positive")
	}
	if c.ControllerThreadPoolNums <= 0 || c.ControllerRequestThreadPoolQueueCapacity <= 0 {
		return errors.New("controller: controllerThreadPoolNums and controllerRequestThreadPoolQueueCapacity must be positive")
	}
	if c.ControllerMaxBrokerSets <= 0 || c.ControllerMaxReplicasPerSet <= 0 || c.ControllerMaxHeartbeats <= 0 {
		return errors.New("controller: controllerMaxBrokerSets, controllerMaxReplicasPerSet and controllerMaxHeartbeats must be positive")
	}
	if c.ControllerRaftHeartbeatTimeoutMillis < 10 || c.ControllerRaftElectionTimeoutMillis < 10 {
		return errors.New("controller: raft timeouts must be at least 10 ms")
	}
	if _, err := c.initUsers(); err != nil {
		return err
	}
	if err := c.Version.Validate(); err != nil {
		return fmt.Errorf("controller: reportedVersion: %w", err)
	}
	return c.Limits.Validate()
}

// listenAddr is where the Remoting port listens: bindAddress, else this
// controller's own peer host, on its peer port.
func (c Config) listenAddr(self Peer) string {
	host, port, _ := net.SplitHostPort(self.Addr)
	if c.BindAddress != "" {
		host = c.BindAddress
	}
	return net.JoinHostPort(host, port)
}

func millis(n int64) time.Duration { return time.Duration(n) * time.Millisecond }

// configFile is where an update is written (ConfigStorePath).
func (c Config) configFile() string {
	if c.ConfigStorePath != "" {
		return c.ConfigStorePath
	}
	home, err := os.UserHomeDir()
	if err != nil {
		home = os.TempDir()
	}
	return filepath.Join(home, "controller", "controller.properties")
}
