package broker

// GET_BROKER_CONFIG and UPDATE_BROKER_CONFIG.
//
// Apache sets the keys of an update on its live config objects by
// reflection and writes the whole configuration to brokerConfigPath; a key
// takes effect at once only where Apache's code reads it again at each use
// (per request, per round of a loop), otherwise at the next start. rocketgo
// makes that split explicit: runtimeKeys are read through Config() at each
// use, so an update swaps a new snapshot and they apply at once; every other
// key is fixed at start-up (ports, paths, flush types, event loops, bounds
// given to the store and the network server), so an update records it in the
// config file for the next start and leaves the running broker as it is.
// GET_BROKER_CONFIG reports the snapshot in force.
//
// File format (Apache's Configuration.persist, MixAll.string2File): every
// key of the configuration as key=value lines sorted by key, no comments;
// the previous content is kept as <file>.bak. Keys of the file this broker
// does not know are kept (Apache's BrokerStartup registers them too).

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/internal/logging"
	"github.com/rocketgo/rocketgo/remoting"
)

// ErrConfigBlackListed is the answer to UPDATE_BROKER_CONFIG for a key
// configBlackList names.
var ErrConfigBlackListed = errors.New("broker: config key in black list")

// alwaysBlackListed are the keys Apache's AdminBrokerProcessor refuses to
// change whatever configBlackList says.
var alwaysBlackListed = []string{"brokerConfigPath", "rocketmqHome", "configBlackList"}

// DefaultConfigBlackList is configBlackList's default: Apache's
// ("configBlackList;brokerConfigPath") and the keys a remote update must
// not reach unless the operator opts in, because one request would switch
// authentication off, move or hide the data, move the listeners or the HA
// link, or lock every client out (for the next start when not applied at
// once). Names Apache has and rocketgo does not know are listed too, so a
// file written for Apache keeps them out of reach as well.
const DefaultConfigBlackList = "configBlackList;brokerConfigPath" +
	// ACL 1.0 and 2.0
	";aclEnable;authenticationEnabled;authorizationEnabled;authConfigPath;initAuthenticationUser" +
	";innerClientAuthenticationCredentials;authenticationWhitelist;authorizationWhitelist" +
	";migrateAuthFromV1Enabled;authenticationProvider;authenticationMetadataProvider;authenticationStrategy" +
	";authorizationProvider;authorizationMetadataProvider;authorizationStrategy" +
	";enableAclRequestCodeWhiteList;accessKey;secretKey" +
	// where data lives
	";storePathRootDir;storePathCommitLog;storePathConsumeQueue;storePathIndex;storePathEpochFile" +
	";storePathBrokerIdentity;storePathDLedgerCommitLog;timerStoreRootDir" +
	// listeners and links
	";listenPort;fastListenPort;bindAddress;haListenPort;haMasterAddress;haAuthSecret" +
	";metricsPromExporterHost;metricsPromExporterPort;metricsPromExporterMaxConnections" +
	// switches that lock clients out or hand the data elsewhere
	";brokerPermission;brokerRole;brokerId;brokerName;brokerClusterName"

// runtimeKeys are the keys an update applies at once. Each is read through
// Config() at every use, named beside it; a key added here must be too. They
// are the keys Apache applies at runtime, except flushConsumerOffsetInterval
// and flushDelayOffsetInterval, which Apache reads once (its schedules) and
// rocketgo's persist loop reads at every tick.
var runtimeKeys = map[string]bool{
	"brokerPermission":                   true, // send, pull, send back checks; registration (perms masked)
	"namesrvAddr":                        true, // each registration
	"registerBrokerTimeoutMills":         true, // each registration
	"compressedRegister":                 true, // each registration
	"enableSplitRegistration":            true, // each registration
	"splitRegistrationSize":              true, // each registration
	"autoCreateTopicEnable":              true, // Topics.AutoCreate: TBW102 stops lending itself when off
	"autoCreateSubscriptionGroup":        true, // Groups.Get
	"longPollingEnable":                  true, // pull
	"shortPollingTimeMills":              true, // pull
	"maxTransferBytesOnMessageInMemory":  true, // pull
	"maxTransferCountOnMessageInMemory":  true, // pull
	"regionId":                           true, // send answers
	"traceOn":                            true, // send answers
	"enablePropertyFilter":               true, // pull, CHECK_CLIENT_CONFIG
	"popFromRetryProbabilityForPriority": true, // pop
	"priorityOrderAsc":                   true, // pop
	"timerMaxDelaySec":                   true, // send of timer messages, RECALL_MESSAGE
	"recallMessageEnable":                true, // RECALL_MESSAGE
	"allowRecallWhenBrokerNotWriteable":  true, // RECALL_MESSAGE
	"validateSystemTopicWhenUpdateTopic": true, // UpdateTopic, DeleteTopic
	"flushConsumerOffsetInterval":        true, // persist loop
	"flushDelayOffsetInterval":           true, // persist loop
	"defaultQueryMaxNum":                 true, // QUERY_MESSAGE
	"transactionTimeOut":                 true, // check service runs, END_TRANSACTION (immunity)
	"transactionCheckMax":                true, // check service runs
	"transactionCheckInterval":           true, // check service, from its next wait
	"rejectTransactionMessage":           true, // prepared sends
	"slaveReadEnable":                    true, // RejectsPulls, pull's suggestBroker (replication)
	"slaveSynchronizePeriod":             true, // the slave's metadata sync (broker/role), from its next wait
}

// knownKeys are the keys of Config, nested structs included.
var knownKeys = sync.OnceValue(func() map[string]bool {
	m := map[string]bool{}
	for _, kv := range config.Pairs(&Config{}) {
		m[kv[0]] = true
	}
	return m
})

// IsRuntimeKey reports whether UPDATE_BROKER_CONFIG applies key at once
// (otherwise a known key is recorded for the next start).
func IsRuntimeKey(key string) bool { return runtimeKeys[key] }

// configFile is the configuration as the broker's config file holds it,
// guarded by Broker.cfgMu.
type configFile struct {
	recorded  Config               // what the next start reads: the snapshot in force plus recorded keys
	extras    [][2]string          // keys of the file this broker does not know, in file order
	version   remoting.DataVersion // GET_BROKER_CONFIG's version: one step per update
	blackList map[string]bool
	changed   []string // keys updates named since start, in first-update order: the only ones rewritten
}

// configBackups is how many generations of the config file are kept beyond
// its .bak (.bak.1 … .bak.4).
const configBackups = 4

func newConfigFile(cfg Config) configFile {
	f := configFile{recorded: cfg, extras: cfg.ConfigFileExtras, blackList: map[string]bool{}}
	f.version.Next()
	for _, k := range alwaysBlackListed {
		f.blackList[k] = true
	}
	// Fixed at start, as Apache's initConfigBlackList (and configBlackList
	// cannot be updated).
	for _, k := range strings.Split(cfg.ConfigBlackList, ";") {
		if k = strings.TrimSpace(k); k != "" {
			f.blackList[k] = true
		}
	}
	return f
}

// ConfigChange is what an update did with each key it named.
type ConfigChange struct {
	Applied  []string // in force now (runtimeKeys)
	Recorded []string // written to the config file, in force after a restart
	Ignored  []string // keys this broker does not know (Apache ignores them too)
}

// UpdateConfig is UPDATE_BROKER_CONFIG: body is Java properties text. The
// update is all or nothing: a key in configBlackList is refused
// NO_PERMISSION with Apache's remark; a value that does not parse, or a
// configuration that would not validate, INVALID_PARAMETER (Apache leaves
// such a value unchanged and answers SUCCESS). An empty body changes
// nothing, as in Apache. The config file is written off the caller's
// goroutine (the persist loop, or Shutdown), with a .bak of the previous.
func (b *Broker) UpdateConfig(body []byte) (ConfigChange, error) {
	var ch ConfigChange
	if len(body) == 0 {
		return ch, nil
	}
	pairs, err := config.ReadProperties(bytes.NewReader(body))
	if err != nil {
		return ch, remoting.Refuse(remoting.SystemError, err, "string2Properties error")
	}
	b.cfgMu.Lock()
	f := &b.cfgFile
	for _, kv := range pairs {
		if f.blackList[kv[0]] {
			b.cfgMu.Unlock()
			return ch, remoting.Refuse(remoting.NoPermission, ErrConfigBlackListed, "Can not update config in black list.")
		}
		if rocksDBStoreKey(kv) {
			// Written to the file, it would stop the next start.
			b.cfgMu.Unlock()
			return ch, remoting.Refuse(remoting.InvalidParameter, ErrRocksDBStore, "The value[%s] of config %s is invalid.", logging.Cut(kv[1]), kv[0])
		}
	}
	rec, cur := f.recorded, *b.Config()
	extras := append([][2]string(nil), f.extras...)
	for _, kv := range pairs {
		key, val := kv[0], strings.TrimSpace(kv[1])
		if !knownKeys()[key] {
			if i := extraIndex(extras, key); i >= 0 {
				extras[i][1] = val
				ch.Recorded = append(ch.Recorded, key)
			} else {
				ch.Ignored = append(ch.Ignored, key)
			}
			continue
		}
		if err := config.Set(&rec, key, val); err != nil {
			b.cfgMu.Unlock()
			return ConfigChange{}, remoting.Refuse(remoting.InvalidParameter, err, "The value[%s] of config %s is invalid.", logging.Cut(val), key)
		}
		if runtimeKeys[key] {
			_ = config.Set(&cur, key, val) // rec took it: a known key and a good value
			ch.Applied = append(ch.Applied, key)
		} else {
			ch.Recorded = append(ch.Recorded, key)
		}
	}
	for _, c := range []*Config{&rec, &cur} {
		if err := c.validate(); err != nil {
			b.cfgMu.Unlock()
			return ConfigChange{}, remoting.Refuse(remoting.InvalidParameter, err, "The broker config is invalid: %v", err)
		}
	}
	if len(ch.Applied) > 0 {
		b.cfg.Store(&cur)
	}
	f.recorded, f.extras = rec, extras
	for _, keys := range [][]string{ch.Applied, ch.Recorded} {
		for _, k := range keys {
			if !slices.Contains(f.changed, k) {
				f.changed = append(f.changed, k)
			}
		}
	}
	f.version.Next()
	b.cfgMu.Unlock()
	b.cfgDirty.Store(true)
	b.persistSoon()
	for _, k := range ch.Applied {
		if k == "brokerPermission" {
			// Name servers must see the new perms now (Apache: a new topic
			// data version and registerBrokerAll).
			b.Topics.BumpVersion()
			b.Role.RegisterAllSoon()
		}
	}
	return ch, nil
}

// validate is Validate of the broker's keys and the store's, on copies:
// Validate fills derived values, which must not leak into what is reported.
func (c Config) validate() error {
	if err := c.Validate(); err != nil {
		return err
	}
	return c.Store.Validate()
}

func extraIndex(extras [][2]string, key string) int {
	for i := range extras {
		if extras[i][0] == key {
			return i
		}
	}
	return -1
}

// ConfigProperties is GET_BROKER_CONFIG: the configuration in force as
// key=value lines sorted by key, as Apache's getAllConfigsFormatString, and
// the configuration's data version. Keys with an empty value are left out,
// as Apache leaves out its unset (null) ones.
func (b *Broker) ConfigProperties() ([]byte, remoting.DataVersion) {
	b.cfgMu.Lock()
	v := b.cfgFile.version
	b.cfgMu.Unlock()
	pairs := config.Pairs(b.Config())
	kept := pairs[:0]
	for _, kv := range pairs {
		if !authConfigKeys[kv[0]] {
			kept = append(kept, kv)
		}
	}
	return config.AppendProperties(nil, kept), v
}

// authConfigKeys are ACL 2.0's keys: Apache 5.3.3 reads them into its
// AuthConfig, which GET_BROKER_CONFIG does not report (its Configuration
// holds the broker, netty and store configs only); neither does rocketgo.
var authConfigKeys = map[string]bool{
	"authenticationEnabled": true, "authorizationEnabled": true, "authConfigPath": true,
	"initAuthenticationUser": true, "innerClientAuthenticationCredentials": true,
	"authenticationWhitelist": true, "authorizationWhitelist": true, "migrateAuthFromV1Enabled": true,
	"authenticationProvider": true, "authenticationMetadataProvider": true, "authenticationStrategy": true,
	"authorizationProvider": true, "authorizationMetadataProvider": true, "authorizationStrategy": true,
	"userCacheMaxNum": true, "userCacheExpiredSecond": true, "userCacheRefreshSecond": true,
	"aclCacheMaxNum": true, "aclCacheExpiredSecond": true, "aclCacheRefreshSecond": true,
}

// configFilePath is where the configuration is written: brokerConfigPath,
// else the file the broker was started with (Config.ConfigFile); empty: not
// written.
func (c *Config) configFilePath() string {
	if c.BrokerConfigPath != "" {
		return c.BrokerConfigPath
	}
	return c.ConfigFile
}

// persistConfigIfDirty writes the keys updates changed into the config
// file, after an update: each changed key's line is rewritten in place (or
// appended) and every other line, comment and blank line is kept, where
// Apache rewrites the file as a dump of every key. A file that does not
// exist yet gets every key, as Apache writes it. The previous content is
// kept as .bak, and the ones before it as .bak.1 … .bak.4.
func (b *Broker) persistConfigIfDirty() error {
	path := b.Config().configFilePath()
	if path == "" {
		b.cfgDirty.Store(false)
		return nil
	}
	return config.PersistIfDirty(path, &b.cfgDirty, func() ([]byte, error) {
		b.cfgMu.Lock()
		pairs := append(config.FilePairs(&b.cfgFile.recorded), b.cfgFile.extras...)
		changed := slices.Clone(b.cfgFile.changed)
		b.cfgMu.Unlock()
		old, err := os.ReadFile(path)
		if err := config.RotateBackups(path, configBackups); err != nil {
			return nil, err
		}
		if err != nil {
			return config.AppendProperties(nil, pairs), nil
		}
		set := make(map[string]string, len(changed))
		for _, kv := range pairs {
			if slices.Contains(changed, kv[0]) {
				set[kv[0]] = kv[1]
			}
		}
		return config.EditProperties(old, set, changed), nil
	})
}

// LoadConfigFile reads the broker's config file (mqbroker -c) into cfg and
// records it as the file UPDATE_BROKER_CONFIG writes back to, with the keys
// of the file this broker does not know, so that a write-back keeps them.
func LoadConfigFile(path string, cfg *Config, log zerolog.Logger) error {
	pairs, err := config.ReadPropertiesFile(path)
	if err != nil {
		return err
	}
	for _, kv := range pairs {
		if rocksDBStoreKey(kv) {
			return fmt.Errorf("broker: %s: %s=true: %w", path, kv[0], ErrRocksDBStore)
		}
	}
	if err := config.Load(path, cfg, log); err != nil {
		return err
	}
	cfg.ConfigFile, cfg.ConfigFileExtras = path, nil
	for _, kv := range pairs {
		if !knownKeys()[kv[0]] {
			if i := extraIndex(cfg.ConfigFileExtras, kv[0]); i >= 0 {
				cfg.ConfigFileExtras[i][1] = kv[1]
			} else {
				cfg.ConfigFileExtras = append(cfg.ConfigFileExtras, kv)
			}
		}
	}
	return nil
}

// rocksDBStoreKey reports a pair that turns on one of Apache 5.4's RocksDB
// stores of half and timer messages (rocksdbstore/ under the store root),
// true as Java's Boolean.parseBoolean reads it. Ignoring it as other
// unknown keys would start a broker that never checks the pending
// transactions or fires the timers held there.
func rocksDBStoreKey(kv [2]string) bool {
	return (kv[0] == "transRocksDBEnable" || kv[0] == "timerRocksDBEnable") && strings.EqualFold(strings.TrimSpace(kv[1]), "true")
}

// ErrRocksDBStore refuses a config file that asks for a RocksDB store of
// transactional or timer messages.
var ErrRocksDBStore = errors.New("rocketgo keeps transactional and timer messages in Apache's file stores only " +
	"and does not read an Apache broker's rocksdbstore/: resolve pending transactions and timers on Apache, " +
	"or set it false there first (docs/compatibility.md)")
