package broker

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/config"
)

// System topic names (Apache TopicValidator / MixAll).
const (
	AutoCreateTopicKey = "TBW102"
	SelfTestTopic      = "SELF_TEST_TOPIC"
	OffsetMovedEvent   = "OFFSET_MOVED_EVENT"
	ScheduleTopic      = "SCHEDULE_TOPIC_XXXX"
	RetryGroupPrefix   = "%RETRY%"
	DLQGroupPrefix     = "%DLQ%"
)

var (
	ErrTopicNotExist = errors.New("broker: topic not exist")
	ErrTopicInvalid  = errors.New("broker: topic name invalid")
	ErrNoPermission  = errors.New("broker: no permission")
)

// TopicConfig is Apache's TopicConfig; fields in fastjson's (alphabetical) order.
type TopicConfig struct {
	Attributes      map[string]string `json:"attributes"`
	Order           bool              `json:"order"`
	Perm            int32             `json:"perm"`
	ReadQueueNums   int32             `json:"readQueueNums"`
	TopicFilterType string            `json:"topicFilterType"`
	TopicName       string            `json:"topicName"`
	TopicSysFlag    int32             `json:"topicSysFlag"`
	WriteQueueNums  int32             `json:"writeQueueNums"`
}

// Readable and Writable test the perm bits.
func (tc *TopicConfig) Readable() bool { return tc.Perm&PermRead != 0 }
func (tc *TopicConfig) Writable() bool { return tc.Perm&PermWrite != 0 }

// DataVersion is Apache's DataVersion: bumped on every change of a table.
type DataVersion struct {
	Counter      int64 `json:"counter"`
	StateVersion int64 `json:"stateVersion"`
	Timestamp    int64 `json:"timestamp"`
}

func (v *DataVersion) next() {
	v.Counter++
	v.Timestamp = time.Now().UnixMilli()
}

// topicsFile is topics.json (TopicConfigSerializeWrapper).
type topicsFile struct {
	DataVersion      DataVersion             `json:"dataVersion"`
	TopicConfigTable map[string]*TopicConfig `json:"topicConfigTable"`
}

// Topics is the broker's topic table, persisted as config/topics.json.
type Topics struct {
	path     string
	onChange func() // called after every change, outside the lock; must not block

	mu      sync.RWMutex
	table   map[string]*TopicConfig // values are never mutated after insertion
	version DataVersion
	dirty   atomic.Bool
}

func newTopics(path string, onChange func()) *Topics {
	return &Topics{path: path, onChange: onChange, table: make(map[string]*TopicConfig)}
}

// load reads topics.json over the system topics already present.
func (t *Topics) load() error {
	b, err := config.ReadFile(t.path)
	if err != nil || b == nil {
		return err
	}
	var f topicsFile
	if err := jsoniter.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("decode %s: %w", t.path, err)
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for name, tc := range f.TopicConfigTable {
		if tc == nil {
			continue
		}
		tc.TopicName = name
		normalize(tc)
		t.table[name] = tc
	}
	t.version = f.DataVersion
	return nil
}

// normalize fills defaults and makes tc's strings its own: a name taken from
// a request header would otherwise pin that connection's header text arena
// (remoting/pool.go) for as long as the topic exists.
func normalize(tc *TopicConfig) {
	tc.TopicName = strings.Clone(tc.TopicName)
	tc.TopicFilterType = strings.Clone(tc.TopicFilterType)
	if len(tc.Attributes) > 0 {
		own := make(map[string]string, len(tc.Attributes))
		for k, v := range tc.Attributes {
			own[strings.Clone(k)] = strings.Clone(v)
		}
		tc.Attributes = own
	}
	if tc.Attributes == nil {
		tc.Attributes = map[string]string{}
	}
	if tc.TopicFilterType == "" {
		tc.TopicFilterType = "SINGLE_TAG"
	}
}

// Get returns a topic's config. The result must not be modified.
func (t *Topics) Get(name string) (*TopicConfig, bool) {
	t.mu.RLock()
	tc, ok := t.table[name]
	t.mu.RUnlock()
	return tc, ok
}

// Put creates or replaces a topic.
func (t *Topics) Put(tc TopicConfig) {
	normalize(&tc)
	t.mu.Lock()
	t.table[tc.TopicName] = &tc
	t.version.next()
	t.dirty.Store(true)
	t.mu.Unlock()
	t.onChange()
}

// putSystem inserts a system topic at start-up without bumping the version.
func (t *Topics) putSystem(tc TopicConfig) {
	normalize(&tc)
	t.mu.Lock()
	t.table[tc.TopicName] = &tc
	t.mu.Unlock()
}

// Delete removes a topic; it reports whether it existed.
func (t *Topics) Delete(name string) bool {
	t.mu.Lock()
	_, ok := t.table[name]
	if ok {
		delete(t.table, name)
		t.version.next()
		t.dirty.Store(true)
	}
	t.mu.Unlock()
	if ok {
		t.onChange()
	}
	return ok
}

// CreateIfAbsent returns the existing config of tc.TopicName or inserts tc.
// created reports whether tc was inserted.
func (t *Topics) CreateIfAbsent(tc TopicConfig) (cfg *TopicConfig, created bool) {
	t.mu.Lock()
	if old, ok := t.table[tc.TopicName]; ok {
		t.mu.Unlock()
		return old, false
	}
	normalize(&tc)
	t.table[tc.TopicName] = &tc
	t.version.next()
	t.dirty.Store(true)
	t.mu.Unlock()
	t.onChange()
	return &tc, true
}

// AutoCreate creates topic from the template defaultTopic on a producer's first
// send, as Apache's createTopicInSendMessageMethod does: the template must
// exist and carry the inherit bit; queue counts are the smaller of the client's
// and the template's.
func (t *Topics) AutoCreate(topic, defaultTopic string, clientQueueNums int32) (*TopicConfig, error) {
	tpl, ok := t.Get(defaultTopic)
	if !ok || tpl.Perm&PermInherit == 0 {
		return nil, fmt.Errorf("%w: %s (no usable template %q)", ErrTopicNotExist, topic, defaultTopic)
	}
	n := min(clientQueueNums, tpl.WriteQueueNums)
	if n <= 0 {
		n = tpl.WriteQueueNums
	}
	cfg, _ := t.CreateIfAbsent(TopicConfig{
		TopicName:      topic,
		ReadQueueNums:  n,
		WriteQueueNums: n,
		Perm:           tpl.Perm &^ PermInherit,
		TopicSysFlag:   tpl.TopicSysFlag,
	})
	return cfg, nil
}

// snapshot returns a copy of the table and its version, for registration and
// GET_ALL_TOPIC_CONFIG.
func (t *Topics) snapshot() (map[string]*TopicConfig, DataVersion) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	m := make(map[string]*TopicConfig, len(t.table))
	for k, v := range t.table {
		m[k] = v
	}
	return m, t.version
}

// Names returns the sorted topic names.
func (t *Topics) Names() []string {
	t.mu.RLock()
	out := make([]string, 0, len(t.table))
	for k := range t.table {
		out = append(out, k)
	}
	t.mu.RUnlock()
	sort.Strings(out)
	return out
}

// MarshalWrapper encodes the TopicConfigSerializeWrapper JSON (topics.json,
// GET_ALL_TOPIC_CONFIG, the registration body).
func (t *Topics) MarshalWrapper() ([]byte, error) {
	m, v := t.snapshot()
	return jsoniter.Marshal(topicsFile{DataVersion: v, TopicConfigTable: m})
}

func (t *Topics) persistIfDirty() error {
	return persistIfDirty(t.path, &t.dirty, t.MarshalWrapper)
}

// ValidTopicName applies Apache's TopicValidator rules.
func ValidTopicName(name string) error {
	if name == "" {
		return fmt.Errorf("%w: the specified topic is blank", ErrTopicInvalid)
	}
	if len(name) > 127 {
		return fmt.Errorf("%w: the specified topic is longer than topic max length 127", ErrTopicInvalid)
	}
	for i := 0; i < len(name); i++ {
		c := name[i]
		if !(c == '%' || c == '|' || c == '_' || c == '-' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9') {
			return fmt.Errorf("%w: the specified topic[%s] contains illegal characters, allowing only ^[%%|a-zA-Z0-9_-]+$", ErrTopicInvalid, name)
		}
	}
	return nil
}

// systemTopics are (re)inserted at every start before topics.json is read.
func systemTopics(c *Config) []TopicConfig {
	out := []TopicConfig{
		{TopicName: SelfTestTopic, ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite},
		{TopicName: OffsetMovedEvent, ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite},
		{TopicName: ScheduleTopic, ReadQueueNums: 18, WriteQueueNums: 18, Perm: PermRead | PermWrite},
		{TopicName: c.BrokerClusterName + "_REPLY_TOPIC", ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite},
	}
	if c.AutoCreateTopicEnable {
		out = append(out, TopicConfig{TopicName: AutoCreateTopicKey, ReadQueueNums: c.DefaultTopicQueueNums,
			WriteQueueNums: c.DefaultTopicQueueNums, Perm: PermInherit | PermRead | PermWrite})
	}
	perm := PermInherit
	if c.ClusterTopicEnable {
		perm |= PermRead | PermWrite
	}
	out = append(out, TopicConfig{TopicName: c.BrokerClusterName, ReadQueueNums: 16, WriteQueueNums: 16, Perm: perm})
	perm = PermInherit
	if c.BrokerTopicEnable {
		perm |= PermRead | PermWrite
	}
	out = append(out, TopicConfig{TopicName: c.BrokerName, ReadQueueNums: 1, WriteQueueNums: 1, Perm: perm})
	if c.TraceTopicEnable {
		out = append(out, TopicConfig{TopicName: c.MsgTraceTopicName, ReadQueueNums: 1, WriteQueueNums: 1, Perm: PermRead | PermWrite})
	}
	return out
}

// IsRetryTopic reports whether topic is a %RETRY% topic.
func IsRetryTopic(topic string) bool { return strings.HasPrefix(topic, RetryGroupPrefix) }
