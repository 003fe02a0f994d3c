package tables

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/internal/logging"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

var (
	ErrTopicNotExist = errors.New("broker: topic not exist")
	ErrNoPermission  = errors.New("broker: no permission")
	// ErrGroupNotExist: no subscription group of that name.
	ErrGroupNotExist = errors.New("broker: subscription group not exist")
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

	// Set by normalize when the config enters the table, so the send path
	// checks a known topic without looking at its name again.
	nameInvalid bool // a system topic named from the config, e.g. a broker name with '.'
	sendRefused bool // NotAllowedSend
}

// NameInvalid reports a topic whose name breaks the topic rule: only system
// topics named after the broker's config can be in the table so.
func (tc *TopicConfig) NameInvalid() bool { return tc.nameInvalid }

// SendRefused reports a topic clients may not send to (NotAllowedSend).
func (tc *TopicConfig) SendRefused() bool { return tc.sendRefused }

// QueueNums is the larger of the read and write queue counts: the queue ids
// the topic has (Apache's stats and send checks use the same).
func (tc *TopicConfig) QueueNums() int32 { return max(tc.ReadQueueNums, tc.WriteQueueNums) }

// Readable and Writable test the perm bits.
func (tc *TopicConfig) Readable() bool { return tc.Perm&message.PermRead != 0 }

func (tc *TopicConfig) Writable() bool { return tc.Perm&message.PermWrite != 0 }

// TopicsFile is topics.json (TopicConfigSerializeWrapper).
type TopicsFile struct {
	DataVersion      remoting.DataVersion    `json:"dataVersion"`
	TopicConfigTable map[string]*TopicConfig `json:"topicConfigTable"`
}

// Topics is the broker's topic table, persisted as config/topics.json.
//
// Invariant: every topic in the table either passed ValidTopicName and has
// queue counts in [0, maxQueueNums] (at least 1 when created by a request),
// or was put there by PutSystem from the broker's config.
type Topics struct {
	path         string
	maxQueueNums int32  // maxTopicQueueNums
	onChange     func() // called after every change, outside the lock; must not block
	// templates reports autoCreateTopicEnable as it is now (nil: true):
	// with it off, TBW102 lends itself as a template no more.
	templates func() bool

	mu      sync.RWMutex
	table   map[string]*TopicConfig // values are never mutated after insertion
	system  map[string]bool         // names PutSystem inserted (Apache's addSystemTopic)
	version remoting.DataVersion
	dirty   atomic.Bool
}

// NewTopics is the table persisted at path; onChange is called after every
// change, outside the lock, and must not block; templates (nil: always)
// reports autoCreateTopicEnable as it is now.
func NewTopics(path string, maxQueueNums int32, onChange func(), templates func() bool) *Topics {
	return &Topics{path: path, maxQueueNums: maxQueueNums, onChange: onChange, templates: templates,
		table: make(map[string]*TopicConfig), system: make(map[string]bool)}
}

// load reads topics.json over the system topics already present. A topic
// whose name breaks the topic rule is skipped, queue counts beyond
// maxQueueNums are lowered to it; each with an error line naming the topic.
func (t *Topics) Load(log zerolog.Logger) error {
	return config.LoadFile(t.path, log, func(b []byte) error {
		f, issues, err := decodeTopicsFile(b, t.maxQueueNums, t.IsSystem)
		if err != nil {
			return err
		}
		logIssues(log, t.path, "topic", issues)
		t.mu.Lock()
		defer t.mu.Unlock()
		for name, tc := range f.TopicConfigTable {
			t.table[name] = tc
		}
		t.version = f.DataVersion
		return nil
	})
}

// loadIssue is one entry of a config file that was skipped or changed.
type loadIssue struct {
	name   string
	reason string
	kept   bool // changed (clamped) rather than skipped
}

func logIssues(log zerolog.Logger, path, kind string, issues []loadIssue) {
	for _, is := range issues {
		msg := "config entry skipped"
		if is.kept {
			msg = "config entry changed"
		}
		log.Error().Str("file", path).Str(kind, logging.Cut(is.name)).Str("reason", logging.Cut(is.reason)).Msg(msg)
	}
}

// decodeTopicsFile parses topics.json (TopicConfigSerializeWrapper) into
// normalized configs that keep the table's invariant; isSystem names the
// topics the broker itself created, which keep their config-derived names.
func decodeTopicsFile(b []byte, maxQueueNums int32, isSystem func(string) bool) (TopicsFile, []loadIssue, error) {
	var f TopicsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return f, nil, err
	}
	var issues []loadIssue
	for name, tc := range f.TopicConfigTable {
		if tc == nil {
			delete(f.TopicConfigTable, name)
			continue
		}
		if err := message.ValidTopicName(name); err != nil && !isSystem(name) {
			issues = append(issues, loadIssue{name: name, reason: err.Error()})
			delete(f.TopicConfigTable, name)
			continue
		}
		if tc.ReadQueueNums < 0 || tc.WriteQueueNums < 0 {
			issues = append(issues, loadIssue{name: name, reason: fmt.Sprintf("negative queue nums: read %d write %d",
				tc.ReadQueueNums, tc.WriteQueueNums)})
			delete(f.TopicConfigTable, name)
			continue
		}
		if (tc.ReadQueueNums > maxQueueNums || tc.WriteQueueNums > maxQueueNums) && !isSystem(name) {
			issues = append(issues, loadIssue{name: name, kept: true, reason: fmt.Sprintf(
				"queue nums read %d write %d lowered to maxTopicQueueNums %d", tc.ReadQueueNums, tc.WriteQueueNums, maxQueueNums)})
			tc.ReadQueueNums = min(tc.ReadQueueNums, maxQueueNums)
			tc.WriteQueueNums = min(tc.WriteQueueNums, maxQueueNums)
		}
		tc.TopicName = name
		Normalize(tc)
	}
	return f, issues, nil
}

// Normalize fills defaults and makes tc's strings its own: a name taken from
// a request header would otherwise pin that connection's header text arena
// (remoting/pool.go) for as long as the topic exists.
func Normalize(tc *TopicConfig) {
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
	tc.nameInvalid = message.ValidTopicName(tc.TopicName) != nil
	tc.sendRefused = message.NotAllowedSend(tc.TopicName)
}

// check applies the rules every topic a request creates must pass: the name
// rule and queue counts in [1, maxTopicQueueNums].
func (t *Topics) check(tc *TopicConfig) error {
	if err := message.ValidTopicName(tc.TopicName); err != nil {
		return err
	}
	if tc.ReadQueueNums < 1 || tc.WriteQueueNums < 1 || tc.ReadQueueNums > t.maxQueueNums || tc.WriteQueueNums > t.maxQueueNums {
		return remoting.Refuse(remoting.InvalidParameter, message.ErrQueueNumsInvalid,
			"The queue nums of topic[%s] must be between 1 and %d (maxTopicQueueNums), read %d write %d.",
			tc.TopicName, t.maxQueueNums, tc.ReadQueueNums, tc.WriteQueueNums)
	}
	return nil
}

// IsSystem is TopicValidator.isSystemTopic: Apache's system topics, the
// rmq_sys_ prefix, and the topics this broker created from its config
// (cluster name, broker name, reply and trace topics).
func (t *Topics) IsSystem(name string) bool {
	if message.IsSystemTopicName(name) {
		return true
	}
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.system[name]
}

// Get returns a topic's config. The result must not be modified.
func (t *Topics) Get(name string) (*TopicConfig, bool) {
	t.mu.RLock()
	tc, ok := t.table[name]
	t.mu.RUnlock()
	return tc, ok
}

// Put creates or replaces a topic after check.
func (t *Topics) Put(tc TopicConfig) error {
	if err := t.check(&tc); err != nil {
		return err
	}
	Normalize(&tc)
	t.mu.Lock()
	t.table[tc.TopicName] = &tc
	t.version.Next()
	t.dirty.Store(true)
	t.mu.Unlock()
	t.onChange()
	return nil
}

// PutSystem inserts a system topic at start-up without bumping the version;
// its name is the config's and is not checked (Apache does not either).
func (t *Topics) PutSystem(tc TopicConfig) {
	Normalize(&tc)
	t.mu.Lock()
	t.table[tc.TopicName] = &tc
	t.system[tc.TopicName] = true
	t.mu.Unlock()
}

// Delete removes a topic; it reports whether it existed.
func (t *Topics) Delete(name string) bool {
	t.mu.Lock()
	_, ok := t.table[name]
	if ok {
		delete(t.table, name)
		t.version.Next()
		t.dirty.Store(true)
	}
	t.mu.Unlock()
	if ok {
		t.onChange()
	}
	return ok
}

// replace takes a master's table and data version when the version differs
// from this table's (a slave's metadata sync): topics the master lacks go,
// except system topics this broker put itself.
func (t *Topics) replace(table map[string]*TopicConfig, v remoting.DataVersion) {
	t.mu.Lock()
	if t.version == v {
		t.mu.Unlock()
		return
	}
	for name := range t.table {
		if _, ok := table[name]; !ok && !t.system[name] {
			delete(t.table, name)
		}
	}
	for name, tc := range table {
		t.table[name] = tc
	}
	t.version = v
	t.dirty.Store(true)
	t.mu.Unlock()
	t.onChange()
}

// CreateIfAbsent returns the existing config of tc.TopicName or inserts tc
// after check. created reports whether tc was inserted.
func (t *Topics) CreateIfAbsent(tc TopicConfig) (cfg *TopicConfig, created bool, err error) {
	if old, ok := t.Get(tc.TopicName); ok {
		return old, false, nil
	}
	if err := t.check(&tc); err != nil {
		return nil, false, err
	}
	Normalize(&tc)
	t.mu.Lock()
	if old, ok := t.table[tc.TopicName]; ok {
		t.mu.Unlock()
		return old, false, nil
	}
	t.table[tc.TopicName] = &tc
	t.version.Next()
	t.dirty.Store(true)
	t.mu.Unlock()
	t.onChange()
	return &tc, true, nil
}

// AutoCreate creates topic from the template defaultTopic on a producer's first
// send, as Apache's createTopicInSendMessageMethod does: the template must
// exist and carry the inherit bit; queue counts are the smaller of the client's
// and the template's.
//
// With autoCreateTopicEnable turned off at runtime (UPDATE_BROKER_CONFIG),
// TBW102 no longer lends itself as a template, as in Apache's
// createTopicInSendMessageMethod, which takes its inherit bit away then.
func (t *Topics) AutoCreate(topic, defaultTopic string, clientQueueNums int32) (*TopicConfig, error) {
	tpl, ok := t.Get(defaultTopic)
	if ok && defaultTopic == message.AutoCreateTopicKey && t.templates != nil && !t.templates() {
		ok = false
	}
	if !ok || tpl.Perm&message.PermInherit == 0 {
		return nil, fmt.Errorf("%w: %s (no usable template %q)", ErrTopicNotExist, topic, defaultTopic)
	}
	n := min(clientQueueNums, tpl.WriteQueueNums)
	if n <= 0 {
		n = tpl.WriteQueueNums
	}
	cfg, _, err := t.CreateIfAbsent(TopicConfig{
		TopicName:      topic,
		ReadQueueNums:  min(n, t.maxQueueNums), // a system template may have more
		WriteQueueNums: min(n, t.maxQueueNums),
		Perm:           tpl.Perm &^ message.PermInherit,
		TopicSysFlag:   tpl.TopicSysFlag,
	})
	return cfg, err
}

// bumpVersion starts a new data version without changing the table, so
// that name servers take the next registration as a change (Apache's
// nextVersion after a change of brokerPermission).
func (t *Topics) BumpVersion() {
	t.mu.Lock()
	t.version.Next()
	t.mu.Unlock()
}

// snapshot returns a copy of the table and its version, for registration and
// GET_ALL_TOPIC_CONFIG.
func (t *Topics) Snapshot() (map[string]*TopicConfig, remoting.DataVersion) {
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
	m, v := t.Snapshot()
	return json.Marshal(TopicsFile{DataVersion: v, TopicConfigTable: m})
}

func (t *Topics) PersistIfDirty() error {
	return config.PersistIfDirty(t.path, &t.dirty, t.MarshalWrapper)
}

// SameTopic is Apache's TopicConfig.equals over the fields a request sets;
// an absent filter type or attributes are the defaults normalize gives.
func SameTopic(a, b *TopicConfig) bool {
	ft := b.TopicFilterType
	if ft == "" {
		ft = "SINGLE_TAG"
	}
	if a.ReadQueueNums != b.ReadQueueNums || a.WriteQueueNums != b.WriteQueueNums || a.Perm != b.Perm ||
		a.TopicSysFlag != b.TopicSysFlag || a.Order != b.Order || a.TopicFilterType != ft ||
		len(a.Attributes) != len(b.Attributes) {
		return false
	}
	for k, v := range b.Attributes {
		if w, ok := a.Attributes[k]; !ok || w != v {
			return false
		}
	}
	return true
}

// TopicTable is the topic table at one data version (GET_ALL_TOPIC_CONFIG,
// registration). Its configs must not be modified.
type TopicTable struct {
	DataVersion remoting.DataVersion
	Topics      map[string]*TopicConfig
}

// ReplaceWith replaces the table with a master's (GET_ALL_TOPIC_CONFIG,
// bare keys quoted), entries checked as load checks them; the topics the
// broker adds itself stay.
func (t *Topics) ReplaceWith(body []byte, log zerolog.Logger) error {
	f, issues, err := decodeTopicsFile(body, t.maxQueueNums, t.IsSystem)
	if err != nil {
		return err
	}
	logIssues(log, "GET_ALL_TOPIC_CONFIG", "topic", issues)
	t.replace(f.TopicConfigTable, f.DataVersion)
	return nil
}
