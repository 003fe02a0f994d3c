package broker

import (
	"fmt"
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/broker/pull"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/ha"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// Config is Apache's BrokerConfig and NettyServerConfig (the keys rocketgo
// honours), with MessageStoreConfig in Store. Field tags hold Apache's key names.
type Config struct {
	BrokerClusterName string `key:"brokerClusterName"`
	BrokerName        string `key:"brokerName"`
	BrokerID          int64  `key:"brokerId"`
	ListenPort        int    `key:"listenPort"`
	BindAddress       string `key:"bindAddress"` // NettyServerConfig; Apache binds all interfaces
	NamesrvAddr       string `key:"namesrvAddr"` // "ip:port;ip:port"
	BrokerIP1         string `key:"brokerIP1"`
	BrokerPermission  int32  `key:"brokerPermission"`
	RocketmqHome      string `key:"rocketmqHome"`

	AutoCreateTopicEnable             bool   `key:"autoCreateTopicEnable"`
	AutoCreateSubscriptionGroup       bool   `key:"autoCreateSubscriptionGroup"`
	DefaultTopicQueueNums             int32  `key:"defaultTopicQueueNums"`
	ClusterTopicEnable                bool   `key:"clusterTopicEnable"`
	BrokerTopicEnable                 bool   `key:"brokerTopicEnable"`
	TraceTopicEnable                  bool   `key:"traceTopicEnable"`
	MsgTraceTopicName                 string `key:"msgTraceTopicName"`
	RegisterNameServerPeriod          int    `key:"registerNameServerPeriod"`   // ms
	RegisterBrokerTimeoutMills        int    `key:"registerBrokerTimeoutMills"` // ms
	LongPollingEnable                 bool   `key:"longPollingEnable"`
	ShortPollingTimeMills             int64  `key:"shortPollingTimeMills"`
	FlushConsumerOffsetInterval       int    `key:"flushConsumerOffsetInterval"` // ms
	ChannelExpiredTimeout             int64  `key:"channelExpiredTimeout"`       // ms
	MaxTransferBytesOnMessageInMemory int    `key:"maxTransferBytesOnMessageInMemory"`
	MaxTransferCountOnMessageInMemory int    `key:"maxTransferCountOnMessageInMemory"`
	RegionID                          string `key:"regionId"`
	TraceOn                           bool   `key:"traceOn"`
	ServerWorkerThreads               int    `key:"serverWorkerThreads"`      // event loops; 0 = GOMAXPROCS
	FlushDelayOffsetInterval          int    `key:"flushDelayOffsetInterval"` // ms, delayOffset.json
	EnablePropertyFilter              bool   `key:"enablePropertyFilter"`     // SQL92 subscriptions
	// Pops of PRIORITY topics (broker/pop): the percent of those by
	// priority that read the retry topic first, and whether queue 0 is the
	// lowest priority (highest queue read first).
	PopFromRetryProbabilityForPriority int  `key:"popFromRetryProbabilityForPriority"`
	PriorityOrderAsc                   bool `key:"priorityOrderAsc"`
	// TimerWheelEnable and TimerMaxDelaySec are MessageStoreConfig keys in
	// Apache 5.x; the timer lives in the broker here.
	TimerWheelEnable bool  `key:"timerWheelEnable"`
	TimerMaxDelaySec int64 `key:"timerMaxDelaySec"`
	// RecallMessageEnable serves RECALL_MESSAGE (broker/send);
	// AllowRecallWhenBrokerNotWriteable lets it through a brokerPermission
	// without write. Apache 5.3's keys and defaults (false, true).
	RecallMessageEnable               bool `key:"recallMessageEnable"`
	AllowRecallWhenBrokerNotWriteable bool `key:"allowRecallWhenBrokerNotWriteable"`

	// Metrics (package metrics): Apache's keys. PROM serves Prometheus on
	// metricsPromExporterHost (brokerIP1 when empty) and
	// metricsPromExporterPort; DISABLE serves nothing (Apache's default;
	// rocketgo's is PROM). metricsLabel adds "k:v,k:v" labels to every
	// metric.
	MetricsExporterType     string `key:"metricsExporterType"`
	MetricsPromExporterHost string `key:"metricsPromExporterHost"`
	MetricsPromExporterPort int    `key:"metricsPromExporterPort"`
	MetricsLabel            string `key:"metricsLabel"`
	// MetricsPromExporterMaxConnections bounds the endpoint's open
	// connections (rocketgo's key): more are closed at once, so that
	// scrapers cannot take the descriptors Remoting clients need.
	MetricsPromExporterMaxConnections int `key:"metricsPromExporterMaxConnections"`

	// AclEnable turns on ACL 1.0 (package acl): every request is checked
	// against ${rocketmqHome}/conf/plain_acl.yml and conf/acl/**.yml.
	AclEnable bool `key:"aclEnable"`

	// ACL 2.0 (package auth): Apache 5.3's AuthConfig keys, read from the
	// broker's file as BrokerStartup reads them. AuthConfigPath is
	// overridden with ${storePathRootDir}/config, as Apache's broker does;
	// users.json and acls.json live there. The provider and strategy keys
	// select Java classes: only Apache's defaults (or nothing) are
	// accepted. The cache keys size Apache's caches; rocketgo holds every
	// user and ACL in memory and reads them for their names only.
	AuthenticationEnabled                bool          `key:"authenticationEnabled"`
	AuthorizationEnabled                 bool          `key:"authorizationEnabled"`
	AuthConfigPath                       string        `key:"authConfigPath"`
	InitAuthenticationUser               config.Secret `key:"initAuthenticationUser"`
	InnerClientAuthenticationCredentials config.Secret `key:"innerClientAuthenticationCredentials"`
	AuthenticationWhitelist              string        `key:"authenticationWhitelist"`
	AuthorizationWhitelist               string        `key:"authorizationWhitelist"`
	MigrateAuthFromV1Enabled             bool          `key:"migrateAuthFromV1Enabled"`
	AuthenticationProvider               string        `key:"authenticationProvider"`
	AuthenticationMetadataProvider       string        `key:"authenticationMetadataProvider"`
	AuthenticationStrategy               string        `key:"authenticationStrategy"`
	AuthorizationProvider                string        `key:"authorizationProvider"`
	AuthorizationMetadataProvider        string        `key:"authorizationMetadataProvider"`
	AuthorizationStrategy                string        `key:"authorizationStrategy"`
	UserCacheMaxNum                      int           `key:"userCacheMaxNum"`
	UserCacheExpiredSecond               int           `key:"userCacheExpiredSecond"`
	UserCacheRefreshSecond               int           `key:"userCacheRefreshSecond"`
	AclCacheMaxNum                       int           `key:"aclCacheMaxNum"`
	AclCacheExpiredSecond                int           `key:"aclCacheExpiredSecond"`
	AclCacheRefreshSecond                int           `key:"aclCacheRefreshSecond"`

	// Registration, filters and parked pulls.
	// CompressedRegister, EnableSplitRegistration and SplitRegistrationSize
	// are Apache's BrokerConfig keys (broker/role's registration); the
	// others are rocketgo's own.
	CompressedRegister      bool `key:"compressedRegister"`
	EnableSplitRegistration bool `key:"enableSplitRegistration"`
	SplitRegistrationSize   int  `key:"splitRegistrationSize"`
	// FilterCacheMaxBytes bounds the compiled TAG and SQL92 expressions kept
	// (broker/tables), counted by expression length.
	FilterCacheMaxBytes int64 `key:"filterCacheMaxBytes"`
	// FilterExpressionMaxLength is the longest subscription expression the
	// broker compiles; a longer one is refused as unparsable.
	FilterExpressionMaxLength int `key:"filterExpressionMaxLength"`
	// MaxParkedPulls bounds the long-polling pulls parked at once (broker/pull);
	// past it a pull that finds nothing is answered PULL_NOT_FOUND at once.
	MaxParkedPulls int `key:"maxParkedPulls"`
	// EnableLiteEventMode: lite pops read the lite topics their client's
	// events name (docs/lite.md); off, every lite topic of its set.
	EnableLiteEventMode bool `key:"enableLiteEventMode"`
	// LiteEventCheckInterval (ms): how often clients that stopped popping
	// lose their lite events to their group's others.
	LiteEventCheckInterval int64 `key:"liteEventCheckInterval"`
	// LiteTtlCheckInterval (ms): how often lite topics past their parent's
	// lite.topic.expiration are deleted.
	LiteTtlCheckInterval int64 `key:"liteTtlCheckInterval"`
	// MinLiteTTl (ms): no lite topic is deleted before this uptime, nor one
	// with a message this recent.
	MinLiteTTl int64 `key:"minLiteTTl"`
	// LiteSubscriptionCheckInterval (ms): how often stale lite subscriptions
	// are dropped; LiteSubscriptionCheckTimeoutMills: stale after this long
	// without a refresh.
	LiteSubscriptionCheckInterval     int64 `key:"liteSubscriptionCheckInterval"`
	LiteSubscriptionCheckTimeoutMills int64 `key:"liteSubscriptionCheckTimeoutMills"`
	// MaxLiteSubscriptionCount bounds the (client, lite topic) pairs, and the
	// clients, of LITE_SUBSCRIPTION_CTL; past it the answer is 2018.
	MaxLiteSubscriptionCount int64 `key:"maxLiteSubscriptionCount"`
	// MaxClientEventCount is a lite client's event capacity unless its group
	// sets lite.sub.client.max.event.cnt.
	MaxClientEventCount int `key:"maxClientEventCount"`
	// LiteEventFullDispatchDelayTime (ms): a client whose event set was full
	// is offered its unread lite topics again after this; ...ForWildcardGroup
	// for wildcard groups.
	LiteEventFullDispatchDelayTime                 int64 `key:"liteEventFullDispatchDelayTime"`
	LiteEventFullDispatchDelayTimeForWildcardGroup int64 `key:"liteEventFullDispatchDelayTimeForWildcardGroup"`
	// Lite consume lag in the metrics (Apache's keys, all off by default):
	// LiteLagCountMetricsEnable serves each lite group's lag (and ready)
	// messages per parent topic, summed over its lite topics at scrape;
	// LiteLagLatencyCollectEnable makes every lite pop that fills its batch
	// note the store time of the first message it left behind in a lite
	// topic, keeping per group the LiteLagLatencyTopK oldest; and
	// LiteLagLatencyMetricsEnable serves the oldest of them as the group's
	// lag latency (docs/observability.md).
	LiteLagCountMetricsEnable   bool `key:"liteLagCountMetricsEnable"`
	LiteLagLatencyCollectEnable bool `key:"liteLagLatencyCollectEnable"`
	LiteLagLatencyMetricsEnable bool `key:"liteLagLatencyMetricsEnable"`
	LiteLagLatencyTopK          int  `key:"liteLagLatencyTopK"`
	// Names and paths: UPDATE_AND_CREATE_TOPIC and
	// DELETE_TOPIC_IN_BROKER refuse system topics (Apache's key and default);
	// no topic a request creates has more than MaxTopicQueueNums read or write
	// queues, nor a group more retry queues (rocketgo's key).
	ValidateSystemTopicWhenUpdateTopic bool  `key:"validateSystemTopicWhenUpdateTopic"`
	MaxTopicQueueNums                  int32 `key:"maxTopicQueueNums"`
	// Pulls whose pages are not in memory: Apache's pull
	// thread pool keys and defaults. Apache runs every pull on that pool;
	// rocketgo answers a pull on its event loop unless the pages it reads
	// are not in memory, and hands only those to PullMessageThreadPoolNums
	// goroutines through a queue of PullThreadPoolQueueCapacity pulls; past
	// it the pull is refused SYSTEM_BUSY, as Apache's full pool does.
	// PullMessageThreadPoolNums 0 (rocketgo's): every pull is read on its
	// loop, unchecked, faulting there if it must.
	PullMessageThreadPoolNums   int `key:"pullMessageThreadPoolNums"`
	PullThreadPoolQueueCapacity int `key:"pullThreadPoolQueueCapacity"`
	// Connections, frames and output: NettyServerConfig's
	// serverChannelMaxIdleTimeSeconds and write buffer marks, and rocketgo's
	// own bounds beside them (remoting.Limits holds the keys).
	Limits remoting.Limits
	// Version is reportedVersion: what the broker reports as its version.
	Version remoting.Reported

	// transactions: Apache's BrokerConfig keys and defaults.
	// TransactionTimeOut (ms): a half message younger than this is not
	// checked yet; TransactionCheckMax: checks before a half message is moved
	// to TRANS_CHECK_MAX_TIME_TOPIC; TransactionCheckInterval (ms): between
	// two runs of the check service. TransactionOpMsgMaxSize and
	// TransactionOpBatchInterval are accepted for Apache's config files but
	// unused: rocketgo writes one op record per END_TRANSACTION, at once
	// (broker/tx, op.go, says why). RejectTransactionMessage refuses
	// prepared sends. EndTransactionThreadPoolNums goroutines serve
	// END_TRANSACTION off the event loops (it reads the half message, which
	// may fault) behind a queue of EndTransactionPoolQueueCapacity requests;
	// past it SYSTEM_BUSY, as Apache's full pool answers.
	TransactionTimeOut              int64 `key:"transactionTimeOut"`
	TransactionCheckMax             int   `key:"transactionCheckMax"`
	TransactionCheckInterval        int64 `key:"transactionCheckInterval"`
	TransactionOpMsgMaxSize         int   `key:"transactionOpMsgMaxSize"`
	TransactionOpBatchInterval      int   `key:"transactionOpBatchInterval"`
	RejectTransactionMessage        bool  `key:"rejectTransactionMessage"`
	EndTransactionThreadPoolNums    int   `key:"endTransactionThreadPoolNums"`
	EndTransactionPoolQueueCapacity int   `key:"endTransactionPoolQueueCapacity"`

	// Runtime configuration: Apache's brokerConfigPath
	// and configBlackList (runtimeconfig.go).
	// BrokerConfigPath, when set, is the file UPDATE_BROKER_CONFIG writes the
	// configuration to, instead of ConfigFile.
	BrokerConfigPath string `key:"brokerConfigPath"`
	// ConfigBlackList: keys UPDATE_BROKER_CONFIG refuses, ';'-separated,
	// besides brokerConfigPath, rocketmqHome and configBlackList. A value in
	// broker.conf replaces the default (DefaultConfigBlackList), which also
	// holds the keys that govern security, where data lives, where the
	// broker listens and whether clients are served: an operator who wants
	// them changeable over the wire lists a shorter black list.
	ConfigBlackList string `key:"configBlackList"`
	// ConfigFile is the file the configuration was read from (mqbroker -c;
	// Apache's BrokerPathConfigHelper); empty: nothing is written. Not a key.
	ConfigFile string
	// ConfigFileExtras are the keys of that file this broker does not know,
	// in file order, written back with the configuration so that an update
	// does not drop them. Not a key.
	ConfigFileExtras [][2]string

	Store store.Config

	// Replication: Apache's MessageStoreConfig HA keys
	// (brokerRole, haListenPort, ..., slaveTimeout) in HA, and the
	// BrokerConfig keys below.
	HA ha.Config
	// HAAuthSecret, when set, makes the HA link authenticated (rocketgo's
	// key): master and slave each prove they hold the same secret before
	// a byte of the commit log moves. Apache slaves cannot replicate from
	// a master that sets it.
	HAAuthSecret config.Secret `key:"haAuthSecret"`
	// BrokerIP2 is the address slaves reach the master's HA listener at,
	// registered as haServerAddr (brokerIP2:haListenPort); empty = brokerIP1.
	BrokerIP2 string `key:"brokerIP2"`
	// SlaveReadEnable: a slave serves pulls, and pull answers suggest the
	// group's brokerId / whichBrokerWhenConsumeSlowly instead of the master.
	SlaveReadEnable bool `key:"slaveReadEnable"`
	// SlaveSynchronizePeriod (ms) is how often a classic slave copies
	// topics, groups, consumer and delay offsets from its master
	// (SlaveSynchronize). rocketgo's key: Apache 5.x syncs every 60 s
	// (checked every 3 s), 4.9 every 10 s, neither configurable. A
	// controller-mode slave keeps Apache's schedule: every 10 s, checked
	// every 3 s.
	SlaveSynchronizePeriod int `key:"slaveSynchronizePeriod"`
	// FastListenPort is Apache's VIP channel ("fast remoting server"): the
	// same requests on listenPort-2, where an Apache slave's metadata sync
	// (BrokerOuterAPI's brokerVIPChannel) asks its master. rocketgo's key:
	// 0 = listenPort-2 (Apache, which has no key for it), -1 = not opened.
	FastListenPort int `key:"fastListenPort"`
	// UseServerSideResetOffset is Apache 5.x's: INVOKE_BROKER_TO_RESET_OFFSET
	// sets the offsets on the broker and the consumers learn them from their
	// next pull (PULL_OFFSET_MOVED); false: Apache 4.x's path, the consumers
	// told (RESET_CONSUMER_CLIENT_OFFSET) and moving themselves.
	UseServerSideResetOffset bool `key:"useServerSideResetOffset"`

	// Controller mode: controllerconfig.go.
	Controller ControllerConfig
	// TLS is built from -Dtls.* arguments and tls.config.file, not from
	// this file (Apache reads them as system properties); nil: plaintext.
	TLS *remoting.TLS
}

// DefaultConfig returns Apache's defaults.
func DefaultConfig() Config {
	host, _ := os.Hostname()
	home, _ := os.UserHomeDir()
	sc := store.DefaultConfig()
	sc.StorePathRootDir = filepath.Join(home, "store")
	return Config{
		BrokerClusterName:                 "DefaultCluster",
		BrokerName:                        host,
		ListenPort:                        10911,
		MetricsExporterType:               "PROM",
		MetricsPromExporterPort:           5557,
		MetricsPromExporterMaxConnections: 64,
		BindAddress:                       "0.0.0.0",
		NamesrvAddr:                       os.Getenv("NAMESRV_ADDR"),
		BrokerPermission:                  message.PermRead | message.PermWrite,
		RocketmqHome:                      os.Getenv("ROCKETMQ_HOME"),
		AutoCreateTopicEnable:             true,
		AutoCreateSubscriptionGroup:       true,
		DefaultTopicQueueNums:             8,
		ClusterTopicEnable:                true,
		BrokerTopicEnable:                 true,
		MsgTraceTopicName:                 "RMQ_SYS_TRACE_TOPIC",
		RegisterNameServerPeriod:          30000,
		RegisterBrokerTimeoutMills:        24000,
		LongPollingEnable:                 true,
		ShortPollingTimeMills:             1000,
		FlushConsumerOffsetInterval:       5000,
		ChannelExpiredTimeout:             120000,
		MaxTransferBytesOnMessageInMemory: 256 * 1024,
		MaxTransferCountOnMessageInMemory: 32,
		RegionID:                          "DefaultRegion",
		TraceOn:                           true,
		FlushDelayOffsetInterval:          10000,
		TimerWheelEnable:                  true,
		PriorityOrderAsc:                  true,
		AllowRecallWhenBrokerNotWriteable: true,
		TimerMaxDelaySec:                  3 * 24 * 3600,
		// Registration, filters and parked pulls.
		CompressedRegister:        false,
		EnableSplitRegistration:   false,
		SplitRegistrationSize:     800,
		FilterCacheMaxBytes:       tables.DefaultFilterCacheMaxBytes,
		FilterExpressionMaxLength: tables.DefaultFilterExpressionMaxLength,
		MaxParkedPulls:            pull.DefaultMaxParked,
		// lite topics
		EnableLiteEventMode:                            true,
		LiteEventCheckInterval:                         10000,
		LiteTtlCheckInterval:                           120000,
		MinLiteTTl:                                     900000,
		LiteSubscriptionCheckInterval:                  120000,
		LiteSubscriptionCheckTimeoutMills:              180000,
		MaxLiteSubscriptionCount:                       100000,
		MaxClientEventCount:                            100,
		LiteEventFullDispatchDelayTime:                 10000,
		LiteEventFullDispatchDelayTimeForWildcardGroup: 10000,
		LiteLagLatencyTopK:                             50,

		Store: sc,
		// ACL 2.0: AuthConfig's cache defaults
		UserCacheMaxNum: 1000, UserCacheExpiredSecond: 600, UserCacheRefreshSecond: 60,
		AclCacheMaxNum: 1000, AclCacheExpiredSecond: 600, AclCacheRefreshSecond: 60,
		// names and paths
		ValidateSystemTopicWhenUpdateTopic: true,
		MaxTopicQueueNums:                  1024,
		UseServerSideResetOffset:           true,                     // Apache 5.x's default
		Limits:                             remoting.DefaultLimits(), // connections, frames and output
		Version:                            remoting.DefaultReported(),
		// runtime configuration
		ConfigBlackList: DefaultConfigBlackList,
		// pulls whose pages are not in memory
		PullMessageThreadPoolNums:   16 + 2*runtime.NumCPU(),
		PullThreadPoolQueueCapacity: 100000,
		// transactions
		TransactionTimeOut:              6000,
		TransactionCheckMax:             15,
		TransactionCheckInterval:        30000,
		TransactionOpMsgMaxSize:         4096,
		TransactionOpBatchInterval:      3000,
		RejectTransactionMessage:        false,
		EndTransactionThreadPoolNums:    max(8+2*runtime.NumCPU(), 4*min(runtime.NumCPU(), 4)),
		EndTransactionPoolQueueCapacity: 100000,
		// replication
		HA:                     ha.DefaultConfig(),
		SlaveSynchronizePeriod: 60000,
		// controller mode
		Controller: defaultControllerConfig(),
	}
}

// Validate checks the config and fills values derived from others.
func (c *Config) Validate() error {
	if c.BrokerName == "" {
		return fmt.Errorf("broker: brokerName is empty")
	}
	if c.ListenPort <= 0 || c.ListenPort > 65535 {
		return fmt.Errorf("broker: listenPort %d out of range", c.ListenPort)
	}
	if c.BrokerIP1 == "" {
		c.BrokerIP1 = localIPv4()
	}
	if _, err := netip.ParseAddr(c.BrokerIP1); err != nil {
		return fmt.Errorf("broker: brokerIP1 %q is not an IP address: %w", c.BrokerIP1, err)
	}
	if c.FlushDelayOffsetInterval <= 0 {
		return fmt.Errorf("broker: flushDelayOffsetInterval %d must be positive", c.FlushDelayOffsetInterval)
	}
	switch strings.ToUpper(c.MetricsExporterType) {
	case "PROM":
		if c.MetricsPromExporterPort <= 0 || c.MetricsPromExporterPort > 65535 {
			return fmt.Errorf("broker: metricsPromExporterPort %d out of range", c.MetricsPromExporterPort)
		}
		if c.MetricsPromExporterMaxConnections < 1 {
			return fmt.Errorf("broker: metricsPromExporterMaxConnections %d must be at least 1", c.MetricsPromExporterMaxConnections)
		}
	case "DISABLE", "OTLP_GRPC", "LOG", "":
		// Apache's other exporters are not served: nothing is exported.
	default:
		return fmt.Errorf("broker: metricsExporterType %q: DISABLE, OTLP_GRPC, PROM or LOG", c.MetricsExporterType)
	}
	// Registration, filters and parked pulls.
	if c.SplitRegistrationSize <= 0 {
		return fmt.Errorf("broker: splitRegistrationSize %d must be positive", c.SplitRegistrationSize)
	}
	if c.LiteEventCheckInterval <= 0 || c.LiteTtlCheckInterval <= 0 || c.LiteSubscriptionCheckInterval <= 0 ||
		c.MaxLiteSubscriptionCount <= 0 || c.MaxClientEventCount <= 0 {
		return fmt.Errorf("broker: liteEventCheckInterval %d, liteTtlCheckInterval %d, liteSubscriptionCheckInterval %d, "+
			"maxLiteSubscriptionCount %d and maxClientEventCount %d must be positive", c.LiteEventCheckInterval,
			c.LiteTtlCheckInterval, c.LiteSubscriptionCheckInterval, c.MaxLiteSubscriptionCount, c.MaxClientEventCount)
	}
	if c.FilterCacheMaxBytes <= 0 || c.FilterExpressionMaxLength <= 0 || c.MaxParkedPulls <= 0 {
		return fmt.Errorf("broker: filterCacheMaxBytes %d, filterExpressionMaxLength %d and maxParkedPulls %d must be positive",
			c.FilterCacheMaxBytes, c.FilterExpressionMaxLength, c.MaxParkedPulls)
	}
	if c.DefaultTopicQueueNums <= 0 {
		return fmt.Errorf("broker: defaultTopicQueueNums %d must be positive", c.DefaultTopicQueueNums)
	}
	// names and paths
	if c.MaxTopicQueueNums <= 0 {
		return fmt.Errorf("broker: maxTopicQueueNums %d must be positive", c.MaxTopicQueueNums)
	}
	// pulls whose pages are not in memory
	if c.PullMessageThreadPoolNums < 0 || c.PullThreadPoolQueueCapacity <= 0 {
		return fmt.Errorf("broker: pullMessageThreadPoolNums %d must not be negative, pullThreadPoolQueueCapacity %d must be positive",
			c.PullMessageThreadPoolNums, c.PullThreadPoolQueueCapacity)
	}
	// transactions
	if c.TransactionTimeOut < 0 || c.TransactionCheckMax < 0 || c.TransactionCheckInterval <= 0 {
		return fmt.Errorf("broker: transactionTimeOut %d and transactionCheckMax %d must not be negative, transactionCheckInterval %d must be positive",
			c.TransactionTimeOut, c.TransactionCheckMax, c.TransactionCheckInterval)
	}
	if c.EndTransactionThreadPoolNums <= 0 || c.EndTransactionPoolQueueCapacity <= 0 {
		return fmt.Errorf("broker: endTransactionThreadPoolNums %d and endTransactionPoolQueueCapacity %d must be positive",
			c.EndTransactionThreadPoolNums, c.EndTransactionPoolQueueCapacity)
	}
	if err := c.validateHA(); err != nil { // replication
		return err
	}
	if err := c.Controller.validate(); err != nil { // controller mode
		return err
	}
	if err := c.Limits.Validate(); err != nil { // connections, frames and output
		return fmt.Errorf("broker: %w", err)
	}
	if err := c.Version.Validate(); err != nil {
		return fmt.Errorf("broker: reportedVersion: %w", err)
	}
	return nil
}

// Addr is the address clients dial and that goes into routes and message ids.
func (c *Config) Addr() string {
	return net.JoinHostPort(c.BrokerIP1, strconv.Itoa(c.ListenPort))
}

// StoreHost is Addr as a netip.AddrPort, written into every stored record.
func (c *Config) StoreHost() netip.AddrPort {
	ip, _ := netip.ParseAddr(c.BrokerIP1)
	return netip.AddrPortFrom(ip.Unmap(), uint16(c.ListenPort))
}

// validateHA checks the replication keys as Apache's BrokerStartup does
// (a master has brokerId 0, a slave a positive one) and fills brokerIP2
// and haListenPort (0 = listenPort+1).
func (c *Config) validateHA() error {
	// In controller mode the controller names the role and the id
	// (Apache's BrokerStartup checks them only outside it).
	switch {
	case c.Controller.EnableControllerMode:
	case c.HA.BrokerRole == ha.Slave && c.BrokerID <= 0:
		return fmt.Errorf("broker: brokerRole SLAVE needs a brokerId > 0, not %d", c.BrokerID)
	case c.HA.BrokerRole != ha.Slave && c.BrokerID != message.MasterID:
		return fmt.Errorf("broker: brokerRole %v needs brokerId 0, not %d", c.HA.BrokerRole, c.BrokerID)
	}
	if c.BrokerIP2 == "" {
		c.BrokerIP2 = c.BrokerIP1
	}
	if _, err := netip.ParseAddr(c.BrokerIP2); err != nil {
		return fmt.Errorf("broker: brokerIP2 %q is not an IP address: %w", c.BrokerIP2, err)
	}
	if c.HA.HAListenPort == 0 {
		c.HA.HAListenPort = c.ListenPort + 1
	}
	if c.HA.HAListenPort < 0 || c.HA.HAListenPort > 65535 {
		return fmt.Errorf("broker: haListenPort %d out of range", c.HA.HAListenPort)
	}
	if err := c.HA.Validate(); err != nil {
		return fmt.Errorf("broker: %w", err)
	}
	if c.FastListenPort == 0 {
		c.FastListenPort = c.ListenPort - 2
		if c.FastListenPort <= 0 {
			c.FastListenPort = -1
		}
	}
	if c.FastListenPort > 65535 {
		return fmt.Errorf("broker: fastListenPort %d out of range", c.FastListenPort)
	}
	if c.SlaveSynchronizePeriod <= 0 {
		return fmt.Errorf("broker: slaveSynchronizePeriod %d must be positive", c.SlaveSynchronizePeriod)
	}
	return nil
}

// HAServerAddr is brokerIP2:haListenPort, what a slave connects to (the
// registration's haServerAddr).
func (c *Config) HAServerAddr() string {
	return net.JoinHostPort(c.BrokerIP2, strconv.Itoa(c.HA.HAListenPort))
}

// IsSlave reports brokerRole SLAVE.
func (c *Config) IsSlave() bool { return c.HA.BrokerRole == ha.Slave }

// NamesrvAddrs splits namesrvAddr on ';' as Apache does.
func (c *Config) NamesrvAddrs() []string {
	var out []string
	for _, a := range strings.Split(c.NamesrvAddr, ";") {
		if a = strings.TrimSpace(a); a != "" {
			out = append(out, a)
		}
	}
	return out
}

// localIPv4 picks the first non-loopback IPv4 address, as Apache's
// RemotingUtil.getLocalAddress does, falling back to loopback.
func localIPv4() string {
	addrs, err := net.InterfaceAddrs()
	if err == nil {
		for _, a := range addrs {
			if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil {
				return n.IP.String()
			}
		}
	}
	return "127.0.0.1"
}
