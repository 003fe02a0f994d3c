package proxy

import (
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	jsoniter "github.com/json-iterator/go"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/remoting"
)

// Config holds the keys of Apache's rmq-proxy.json (ProxyConfig.java) that
// rocketgo's proxy reads, with Apache's defaults. Unknown keys are logged
// once and ignored.
type Config struct {
	// RocketMQClusterName is the cluster the proxy serves (rmq-proxy.json's only
	// key in Apache's distribution); informational in cluster mode.
	RocketMQClusterName string `json:"rocketMQClusterName"`
	// NamesrvAddr is Apache's "a:9876;b:9876" list of name servers.
	NamesrvAddr string `json:"namesrvAddr"`
	// ProxyMode is CLUSTER (mqproxy: a separate process talking Remoting to
	// brokers) or LOCAL (mqbroker --enable-proxy: inside the broker).
	ProxyMode string `json:"proxyMode"`
	// GrpcServerPort is the gRPC port, plaintext and TLS on the same port.
	GrpcServerPort int `json:"grpcServerPort"`
	// GrpcMaxInboundMessageSize bounds one gRPC message (bytes).
	GrpcMaxInboundMessageSize int `json:"grpcMaxInboundMessageSize"`
	// MaxMessageSize bounds one message body (bytes): MESSAGE_BODY_TOO_LARGE.
	MaxMessageSize int `json:"maxMessageSize"`
	// EnableMessageBodyEmptyCheck refuses empty bodies (MESSAGE_BODY_EMPTY).
	EnableMessageBodyEmptyCheck bool `json:"enableMessageBodyEmptyCheck"`
	// MaxUserPropertySize bounds the bytes of user properties, tag and keys.
	MaxUserPropertySize int `json:"maxUserPropertySize"`
	// UserPropertyMaxNum bounds the number of user properties.
	UserPropertyMaxNum int `json:"userPropertyMaxNum"`
	// MaxMessageGroupSize bounds a FIFO message group (bytes, exclusive).
	MaxMessageGroupSize int `json:"maxMessageGroupSize"`
	// MaxDelayTimeMills bounds how far ahead a delivery timestamp may be.
	MaxDelayTimeMills int64 `json:"maxDelayTimeMills"`
	// MaxTransactionRecoverySecond bounds orphaned_transaction_recovery_duration.
	MaxTransactionRecoverySecond int64 `json:"maxTransactionRecoverySecond"`
	// EnableTopicMessageTypeCheck is sent to producers as validate_message_type.
	EnableTopicMessageTypeCheck bool `json:"enableTopicMessageTypeCheck"`
	// TransactionHeartbeatPeriodSecond is how often transactional producer
	// groups are heartbeated to the brokers that hold their half messages.
	TransactionHeartbeatPeriodSecond int `json:"transactionHeartbeatPeriodSecond"`
	// TransactionDataExpireMillis is how long an unended transaction's data
	// (broker, offsets) is kept for EndTransaction; TransactionDataMaxNum
	// bounds the entries per producer group and transaction id.
	TransactionDataExpireMillis int64 `json:"transactionDataExpireMillis"`
	TransactionDataMaxNum       int   `json:"transactionDataMaxNum"`
	// MaxClients bounds the gRPC clients (by x-mq-client-id) remembered at
	// once (rocketgo's bound; Apache has none): RESOURCE_EXHAUSTED past it.
	MaxClients int `json:"maxClients"`
	// ACL 2.0 (Apache's AuthConfig, read from the same file): the gRPC
	// calls are checked against the users and ACLs the brokers hold
	// (AUTH_GET_USER, AUTH_GET_ACL), and the proxy signs its own calls to
	// brokers with InnerClientAuthenticationCredentials
	// ({"accessKey":..,"secretKey":..}).
	AuthenticationEnabled                bool   `json:"authenticationEnabled"`
	AuthorizationEnabled                 bool   `json:"authorizationEnabled"`
	InnerClientAuthenticationCredentials string `json:"innerClientAuthenticationCredentials"`
	// AuthenticationWhitelist and AuthorizationWhitelist list the gRPC
	// request messages (apache.rocketmq.v2.QueryRouteRequest, …) a step
	// skips, comma-separated.
	AuthenticationWhitelist        string `json:"authenticationWhitelist"`
	AuthorizationWhitelist         string `json:"authorizationWhitelist"`
	AuthenticationMetadataProvider string `json:"authenticationMetadataProvider"`
	AuthorizationMetadataProvider  string `json:"authorizationMetadataProvider"`
	// GrpcClientProducerMaxAttempts and the backoff keys are sent to
	// producers in their settings.
	GrpcClientProducerMaxAttempts          int     `json:"grpcClientProducerMaxAttempts"`
	GrpcClientProducerBackoffInitialMillis int64   `json:"grpcClientProducerBackoffInitialMillis"`
	GrpcClientProducerBackoffMaxMillis     int64   `json:"grpcClientProducerBackoffMaxMillis"`
	GrpcClientProducerBackoffMultiplier    float32 `json:"grpcClientProducerBackoffMultiplier"`
	// GrpcClientConsumerLongPollingBatchSize and the long-polling bounds are
	// a simple consumer's defaults and limits.
	GrpcClientConsumerLongPollingBatchSize        int   `json:"grpcClientConsumerLongPollingBatchSize"`
	GrpcClientConsumerMinLongPollingTimeoutMillis int64 `json:"grpcClientConsumerMinLongPollingTimeoutMillis"`
	GrpcClientConsumerMaxLongPollingTimeoutMillis int64 `json:"grpcClientConsumerMaxLongPollingTimeoutMillis"`
	// TLS: permissive mode serves TLS and plaintext on the gRPC port; a
	// self-signed certificate is generated when the files do not exist.
	TLSTestModeEnable bool   `json:"tlsTestModeEnable"`
	TLSKeyPath        string `json:"tlsKeyPath"`
	TLSCertPath       string `json:"tlsCertPath"`
	// GrpcMaxConcurrentStreams bounds the calls in flight on one HTTP/2
	// connection (parked receives included) and GrpcMaxConnections the
	// connections (rocketgo's bounds; Apache leaves them to Netty): a
	// connection past the bound is closed at once with a log line.
	GrpcMaxConcurrentStreams uint32 `json:"grpcMaxConcurrentStreams"`
	GrpcMaxConnections       int    `json:"grpcMaxConnections"`
	// GrpcHandshakeTimeoutMillis bounds a new connection's TLS handshake
	// and HTTP/2 preface: a client that opens a connection and stalls (a
	// ClientHello never finished, nothing sent) is closed after it
	// (rocketgo's key; Netty's SslHandler closes after 10 s).
	GrpcHandshakeTimeoutMillis int64 `json:"grpcHandshakeTimeoutMillis"`
	// GrpcClientIdleTimeMills closes a connection with no call in flight
	// for that long (Apache's key, NettyServerBuilder.maxConnectionIdle).
	GrpcClientIdleTimeMills int64 `json:"grpcClientIdleTimeMills"`
	// GrpcMaxHeaderListSize bounds the metadata of one call (bytes;
	// grpc-java's default, which Apache's proxy runs with).
	GrpcMaxHeaderListSize uint32 `json:"grpcMaxHeaderListSize"`
	// GrpcTelemetryCommandsPerSecond bounds the commands one telemetry
	// stream is served (settings, thread stacks, verify results), with a
	// burst of ten times as many: past it a command is answered
	// TOO_MANY_REQUESTS, as Apache answers a call its executor rejects.
	GrpcTelemetryCommandsPerSecond int `json:"grpcTelemetryCommandsPerSecond"`
	// GrpcMaxInFlightRequestBytes bounds the message bytes all SendMessage
	// calls together hold (rocketgo's bound; Apache relies on its
	// executors' queues): each reserves maxMessageSize before its message
	// is read, a batch the rest after decode; a call past it is refused at
	// once (RESOURCE_EXHAUSTED before it is read, TOO_MANY_REQUESTS
	// after), which the SDKs retry with backoff.
	GrpcMaxInFlightRequestBytes int64 `json:"grpcMaxInFlightRequestBytes"`
	// Receipt-handle auto-renew (renew.go): messages received with
	// auto_renew are popped for DefaultInvisibleTimeMills and renewed
	// before they become visible, RenewAheadTimeMillis ahead, scanning every
	// RenewSchedulePeriodMillis, for up to RenewMaxTimeMillis; a renewal
	// failing MaxRenewRetryTimes times in a row stops; an offline client's
	// messages come back after InvisibleTimeMillisWhenClear.
	EnableProxyAutoRenew         bool  `json:"enableProxyAutoRenew"`
	DefaultInvisibleTimeMills    int64 `json:"defaultInvisibleTimeMills"`
	RenewAheadTimeMillis         int64 `json:"renewAheadTimeMillis"`
	RenewMaxTimeMillis           int64 `json:"renewMaxTimeMillis"`
	RenewSchedulePeriodMillis    int64 `json:"renewSchedulePeriodMillis"`
	MaxRenewRetryTimes           int   `json:"maxRenewRetryTimes"`
	InvisibleTimeMillisWhenClear int64 `json:"invisibleTimeMillisWhenClear"`
	// Lite topics (Apache 5.5): MaxLiteTopicSize bounds a lite topic's
	// UTF-8 length on send and PARTIAL_ADD and is sent to consumers in
	// their settings; MaxLiteRenewNumPerChannel bounds the un-acked
	// messages (handles kept for renewal) of one lite consumer and group
	// before its receives are FORBIDDEN; MaxSyncLiteSubscriptionRate bounds
	// PARTIAL_ADD SyncLiteSubscription calls per second on this proxy.
	MaxLiteTopicSize            int `json:"maxLiteTopicSize"`
	MaxLiteRenewNumPerChannel   int `json:"maxLiteRenewNumPerChannel"`
	MaxSyncLiteSubscriptionRate int `json:"maxSyncLiteSubscriptionRate"`
	// RequestTimeout bounds one Remoting call to a broker or name server
	// (rocketgo's key).
	RemotingTimeoutMillis int64 `json:"remotingTimeoutMillis"`
	// TLS is how the proxy's Remoting client dials name servers and brokers
	// (-Dtls.enable and tls.client.*, as Apache's proxy reads them); nil:
	// plaintext. Not a rmq-proxy.json key.
	TLS *remoting.TLS `json:"-"`
}

// DefaultConfig returns Apache 5.3.3 ProxyConfig's defaults.
func DefaultConfig() Config {
	return Config{
		RocketMQClusterName:                           "DefaultCluster",
		NamesrvAddr:                                   os.Getenv("NAMESRV_ADDR"),
		ProxyMode:                                     "CLUSTER",
		GrpcServerPort:                                8081,
		GrpcMaxInboundMessageSize:                     130 * 1024 * 1024,
		MaxMessageSize:                                4 * 1024 * 1024,
		EnableMessageBodyEmptyCheck:                   true,
		MaxUserPropertySize:                           16 * 1024,
		UserPropertyMaxNum:                            128,
		MaxMessageGroupSize:                           64,
		MaxDelayTimeMills:                             int64(24 * time.Hour / time.Millisecond),
		MaxTransactionRecoverySecond:                  3600,
		EnableTopicMessageTypeCheck:                   true,
		TransactionHeartbeatPeriodSecond:              20,
		TransactionDataExpireMillis:                   30_000,
		TransactionDataMaxNum:                         15,
		MaxClients:                                    100_000,
		GrpcClientProducerMaxAttempts:                 3,
		GrpcClientProducerBackoffInitialMillis:        10,
		GrpcClientProducerBackoffMaxMillis:            1000,
		GrpcClientProducerBackoffMultiplier:           2,
		GrpcClientConsumerLongPollingBatchSize:        32,
		GrpcClientConsumerMinLongPollingTimeoutMillis: 5_000,
		GrpcClientConsumerMaxLongPollingTimeoutMillis: 20_000,
		TLSTestModeEnable:                             true,
		GrpcMaxConcurrentStreams:                      1024,
		GrpcMaxConnections:                            10_000,
		GrpcHandshakeTimeoutMillis:                    5_000,
		GrpcClientIdleTimeMills:                       120_000,
		GrpcMaxHeaderListSize:                         8 * 1024,
		GrpcTelemetryCommandsPerSecond:                20,
		GrpcMaxInFlightRequestBytes:                   1 << 30,
		RemotingTimeoutMillis:                         3_000,
		EnableProxyAutoRenew:                          true,
		DefaultInvisibleTimeMills:                     60_000,
		RenewAheadTimeMillis:                          10_000,
		RenewMaxTimeMillis:                            3 * 3600 * 1000,
		RenewSchedulePeriodMillis:                     5_000,
		MaxRenewRetryTimes:                            3,
		InvisibleTimeMillisWhenClear:                  1_000,
		MaxLiteTopicSize:                              64,
		MaxLiteRenewNumPerChannel:                     100,
		MaxSyncLiteSubscriptionRate:                   5000,
	}
}

// Validate checks the values a proxy cannot run with.
func (c *Config) Validate() error {
	if !strings.EqualFold(c.ProxyMode, "CLUSTER") && !strings.EqualFold(c.ProxyMode, "LOCAL") {
		return fmt.Errorf("proxy: proxyMode %q: CLUSTER or LOCAL", c.ProxyMode)
	}
	if strings.TrimSpace(c.NamesrvAddr) == "" {
		return errors.New("proxy: namesrvAddr is empty (rmq-proxy.json namesrvAddr, -n or NAMESRV_ADDR)")
	}
	if c.GrpcServerPort < 0 || c.GrpcServerPort > 65535 {
		return fmt.Errorf("proxy: grpcServerPort %d out of range", c.GrpcServerPort)
	}
	if c.EnableProxyAutoRenew && (c.DefaultInvisibleTimeMills < 1000 || c.DefaultInvisibleTimeMills > maxInvisibleMillis ||
		c.RenewAheadTimeMillis < 0 || c.RenewMaxTimeMillis <= 0 || c.RenewSchedulePeriodMillis < 10 ||
		c.MaxRenewRetryTimes <= 0 || c.InvisibleTimeMillisWhenClear < 0 || c.InvisibleTimeMillisWhenClear > maxInvisibleMillis) {
		return errors.New("proxy: auto-renew keys out of range (defaultInvisibleTimeMills 1 s to 12 h, " +
			"renewSchedulePeriodMillis ≥ 10, renewMaxTimeMillis and maxRenewRetryTimes > 0)")
	}
	if c.GrpcMaxInboundMessageSize <= 0 || c.MaxClients <= 0 || c.RemotingTimeoutMillis <= 0 ||
		c.GrpcMaxConcurrentStreams == 0 || c.GrpcMaxConnections <= 0 || c.GrpcHandshakeTimeoutMillis <= 0 ||
		c.GrpcClientIdleTimeMills <= 0 || c.GrpcMaxHeaderListSize < 1024 || c.GrpcTelemetryCommandsPerSecond <= 0 ||
		c.GrpcMaxInFlightRequestBytes <= 0 {
		return errors.New("proxy: grpcMaxInboundMessageSize, maxClients, remotingTimeoutMillis, " +
			"grpcMaxConcurrentStreams, grpcMaxConnections, grpcHandshakeTimeoutMillis, grpcClientIdleTimeMills " +
			"grpcTelemetryCommandsPerSecond and grpcMaxInFlightRequestBytes must be positive, grpcMaxHeaderListSize at least 1024")
	}
	if c.MaxLiteTopicSize <= 0 || c.MaxLiteRenewNumPerChannel < 0 || c.MaxSyncLiteSubscriptionRate <= 0 {
		return errors.New("proxy: maxLiteTopicSize and maxSyncLiteSubscriptionRate must be positive, maxLiteRenewNumPerChannel not negative")
	}
	return nil
}

// LoadConfigFile reads rmq-proxy.json over cfg: keys present replace the
// defaults, unknown keys are logged once each.
func LoadConfigFile(path string, cfg *Config, log zerolog.Logger) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("read proxy config %s: %w", path, err)
	}
	if err := json.Unmarshal(b, cfg); err != nil {
		return fmt.Errorf("parse proxy config %s: %w", path, err)
	}
	var raw map[string]jsoniter.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		return fmt.Errorf("parse proxy config %s: %w", path, err)
	}
	known := knownKeys()
	for k := range raw {
		if !known[k] {
			log.Warn().Str("key", k).Str("file", path).Msg("unknown proxy config key ignored")
		}
	}
	return nil
}

func knownKeys() map[string]bool {
	var m map[string]jsoniter.RawMessage
	b, _ := json.Marshal(DefaultConfig()) // a struct of plain fields: cannot fail
	_ = json.Unmarshal(b, &m)
	out := make(map[string]bool, len(m))
	for k := range m {
		out[k] = true
	}
	return out
}
