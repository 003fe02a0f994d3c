package namesrv

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/remoting"
)

// Config holds the keys of Apache's NamesrvConfig and NettyServerConfig that
// rocketgo honours. Field tags carry the exact Apache key names.
type Config struct {
	// RocketmqHome is Apache's install directory; informational only.
	RocketmqHome string `key:"rocketmqHome"`
	// KvConfigPath is where the KV config is persisted as JSON.
	KvConfigPath string `key:"kvConfigPath"`
	// ConfigStorePath is where Apache persists runtime config updates; kept
	// so configs that set it load without a warning.
	ConfigStorePath string `key:"configStorePath"`
	ProductEnvName  string `key:"productEnvName"`
	ClusterTest     bool   `key:"clusterTest"`
	// OrderMessageEnable copies ORDER_TOPIC_CONFIG KV entries into route data.
	OrderMessageEnable bool `key:"orderMessageEnable"`
	// ReturnOrderTopicConfigToBroker puts the ORDER_TOPIC_CONFIG namespace in
	// REGISTER_BROKER answers.
	ReturnOrderTopicConfigToBroker bool `key:"returnOrderTopicConfigToBroker"`
	// ScanNotActiveBrokerInterval is the expiry scan period in milliseconds.
	ScanNotActiveBrokerInterval int64 `key:"scanNotActiveBrokerInterval"`
	// SupportActingMaster shows the smallest live slave id as master (id 0) in
	// routes of brokers registered with enableActingMaster whose master is gone.
	SupportActingMaster bool `key:"supportActingMaster"`
	// EnableAllTopicList allows GET_ALL_TOPIC_LIST_FROM_NAMESERVER.
	EnableAllTopicList bool `key:"enableAllTopicList"`
	// EnableTopicList allows GET_TOPICS_BY_CLUSTER.
	EnableTopicList bool `key:"enableTopicList"`
	// DeleteTopicWithBrokerRegistration drops a broker's queue data for topics
	// missing from its registration body.
	DeleteTopicWithBrokerRegistration bool `key:"deleteTopicWithBrokerRegistration"`

	// BindAddress is the listen host (NettyServerConfig); Apache binds all interfaces.
	BindAddress string `key:"bindAddress"`
	// ListenPort is the listen port; 0 picks a free port (tests).
	ListenPort int `key:"listenPort"`
	// ServerSelectorThreads is the number of event loops.
	ServerSelectorThreads int `key:"serverSelectorThreads"`

	// Registration. RegisterBodyMaxInflatedBytes bounds
	// what a compressed REGISTER_BROKER body may inflate to (rocketgo's own
	// key; Apache has no bound): a larger one is refused, SYSTEM_ERROR.
	RegisterBodyMaxInflatedBytes int64 `key:"registerBodyMaxInflatedBytes"`
	// Authentication (rocketgo's own on the name server; Apache's name
	// server has none): with AuthenticationEnabled every request that
	// changes the tables must be signed (auth.go). InitAuthenticationUser
	// is a Super user ({"username":..,"password":..}, the broker's key);
	// AuthConfigPath, when set, is a directory whose users.json (the
	// broker's format) adds users.
	AuthenticationEnabled  bool          `key:"authenticationEnabled"`
	InitAuthenticationUser config.Secret `key:"initAuthenticationUser"`
	AuthConfigPath         string        `key:"authConfigPath"`

	// Connections, frames and output: NettyServerConfig's
	// serverChannelMaxIdleTimeSeconds and write buffer marks, and rocketgo's
	// own bounds beside them (remoting.Limits holds the keys).
	Limits remoting.Limits
	// Version is reportedVersion: what the name server reports as its
	// version.
	Version remoting.Reported
	// TLS is built from -Dtls.* arguments and tls.config.file, not from
	// this file (Apache reads them as system properties); nil: plaintext.
	TLS *remoting.TLS
}

// DefaultConfig returns Apache's defaults (NamesrvStartup sets listenPort 9876).
func DefaultConfig() Config {
	home, _ := os.UserHomeDir() // "" when unknown, as Java's user.home would be odd anyway
	return Config{
		RocketmqHome:                      os.Getenv("ROCKETMQ_HOME"),
		KvConfigPath:                      filepath.Join(home, "namesrv", "kvConfig.json"),
		ConfigStorePath:                   filepath.Join(home, "namesrv", "namesrv.properties"),
		ProductEnvName:                    "center",
		ClusterTest:                       false,
		OrderMessageEnable:                false,
		ReturnOrderTopicConfigToBroker:    true,
		ScanNotActiveBrokerInterval:       5000,
		SupportActingMaster:               false,
		EnableAllTopicList:                true,
		EnableTopicList:                   true,
		DeleteTopicWithBrokerRegistration: false,
		BindAddress:                       "0.0.0.0",
		ListenPort:                        9876,
		ServerSelectorThreads:             3,
		RegisterBodyMaxInflatedBytes:      DefaultMaxRegisterBodyInflated,
		Limits:                            remoting.DefaultLimits(), // connections, frames and output
		Version:                           remoting.DefaultReported(),
	}
}

// Validate checks the values New relies on.
func (c Config) Validate() error {
	if c.ListenPort < 0 || c.ListenPort > 65535 {
		return fmt.Errorf("namesrv: listenPort %d out of range", c.ListenPort)
	}
	if c.ScanNotActiveBrokerInterval <= 0 {
		return fmt.Errorf("namesrv: scanNotActiveBrokerInterval %d must be positive", c.ScanNotActiveBrokerInterval)
	}
	if c.KvConfigPath == "" {
		return fmt.Errorf("namesrv: kvConfigPath is empty")
	}
	if c.RegisterBodyMaxInflatedBytes <= 0 {
		return fmt.Errorf("namesrv: registerBodyMaxInflatedBytes %d must be positive", c.RegisterBodyMaxInflatedBytes)
	}
	if c.ServerSelectorThreads < 0 {
		return fmt.Errorf("namesrv: serverSelectorThreads %d is negative", c.ServerSelectorThreads)
	}
	if err := c.Limits.Validate(); err != nil { // connections, frames and output
		return fmt.Errorf("namesrv: %w", err)
	}
	if err := c.Version.Validate(); err != nil {
		return fmt.Errorf("namesrv: reportedVersion: %w", err)
	}
	return nil
}

func (c Config) scanInterval() time.Duration {
	return time.Duration(c.ScanNotActiveBrokerInterval) * time.Millisecond
}
