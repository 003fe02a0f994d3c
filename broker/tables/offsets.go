package tables

import (
	"errors"
	"fmt"
	"maps"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Offsets holds consumer groups' committed offsets (next offset to consume per
// topic queue), persisted as config/consumerOffset.json every
// flushConsumerOffsetInterval and at shutdown.
//
// File shape (fastjson, bare integer keys):
//
//	{"offsetTable":{"TopicTest@groupA":{0:250,1:249}}}
//
// With enableLmq the file is config/lmqConsumerOffset.json, Apache's
// LmqConsumerOffsetManager's (its lmqOffsetTable, for groups named %LMQ%…,
// is not kept).
//
// Invariant: every key's topic passed ValidTopicName, or is an LMQ's
// (lmqoffsets.go), and its group ValidGroupName (neither holds '@'), and
// queue ids are in [0, maxQueueNums): what is loaded is checked here, what
// is committed by the handlers. Queue 0 of an LMQ is in lmq, never in table.
type Offsets struct {
	path         string
	maxQueueNums int32
	// fallback is read when path does not exist (consumerOffset.json when
	// path is lmqConsumerOffset.json: offsets survive turning LMQ on).
	fallback string

	mu    sync.RWMutex
	table map[string]map[int32]int64 // "topic@group" → queueId → offset
	lmq   map[string]lmqEntry        // LMQ → its groups' offsets of queue 0
	// resets are the offsets an operator set (a server-side reset) that
	// the group's next pull of the queue has not yet been told; while one
	// is pending the group's own commits for that queue are ignored.
	resets    map[string]map[int32]int64
	anyResets atomic.Bool // len(resets) > 0: the pull path's check without a lock or a key
	dirty     atomic.Bool
}

func NewOffsets(path string, maxQueueNums int32) *Offsets {
	return &Offsets{path: path, maxQueueNums: maxQueueNums, table: make(map[string]map[int32]int64),
		lmq: make(map[string]lmqEntry), resets: make(map[string]map[int32]int64)}
}

// LoadFallback makes Load read fallback when the file does not exist yet.
func (o *Offsets) LoadFallback(fallback string) { o.fallback = fallback }

func offsetKey(topic, group string) string { return topic + "@" + group }

// cutOffsetKey splits "topic@group"; neither name may hold '@'.
func cutOffsetKey(key string) (topic, group string, ok bool) { return strings.Cut(key, "@") }

// Commit stores a group's offset for a queue.
func (o *Offsets) Commit(group, topic string, queueID int32, offset int64) {
	o.mu.Lock()
	o.setLocked(group, topic, queueID, offset)
	o.dirty.Store(true)
	o.mu.Unlock()
}

func (o *Offsets) setLocked(group, topic string, queueID int32, offset int64) {
	if isLMQQueue(topic, queueID) {
		o.lmqSetLocked(topic, group, offset)
		return
	}
	setOffset(o.table, offsetKey(topic, group), queueID, offset)
}

// setOffset sets t[key][queueID], making the key's map when it has none.
func setOffset(t map[string]map[int32]int64, key string, queueID int32, offset int64) {
	q := t[key]
	if q == nil {
		q = make(map[int32]int64)
		t[key] = q
	}
	q[queueID] = offset
}

// AssignReset is an operator's reset of a group's queue to offset
// (ConsumerOffsetManager.assignResetOffset): committed at once, and kept
// for the group's next pull of the queue (TakeReset).
func (o *Offsets) AssignReset(group, topic string, queueID int32, offset int64) {
	key := offsetKey(topic, group)
	o.mu.Lock()
	setOffset(o.resets, key, queueID, offset)
	o.anyResets.Store(true)
	o.setLocked(group, topic, queueID, offset)
	o.dirty.Store(true)
	o.mu.Unlock()
}

// TakeReset returns and forgets the reset pending for a group's queue.
func (o *Offsets) TakeReset(group, topic string, queueID int32) (int64, bool) {
	if !o.anyResets.Load() {
		return 0, false
	}
	key := offsetKey(topic, group)
	o.mu.RLock()
	_, ok := o.resets[key][queueID]
	o.mu.RUnlock()
	if !ok { // the common case, under the read lock only
		return 0, false
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	r := o.resets[key]
	off, ok := r[queueID]
	delete(r, queueID)
	if len(r) == 0 {
		delete(o.resets, key)
		o.anyResets.Store(len(o.resets) > 0)
	}
	return off, ok
}

// ResetPending reports whether a reset waits for the group's next pull of the queue.
func (o *Offsets) ResetPending(group, topic string, queueID int32) bool {
	if !o.anyResets.Load() {
		return false
	}
	o.mu.RLock()
	defer o.mu.RUnlock()
	_, ok := o.resets[offsetKey(topic, group)][queueID]
	return ok
}

// merge takes a master's offsets over these, a topic@group at a time (a
// slave's metadata sync).
func (o *Offsets) merge(table map[string]map[int32]int64) {
	o.mu.Lock()
	for k, q := range table {
		o.putLoadedLocked(k, q)
	}
	o.mu.Unlock()
	o.dirty.Store(true)
}

// Query returns a group's committed offset for a queue.
func (o *Offsets) Query(group, topic string, queueID int32) (int64, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
	if isLMQQueue(topic, queueID) {
		return o.lmqGetLocked(topic, group)
	}
	off, ok := o.table[offsetKey(topic, group)][queueID]
	return off, ok
}

// Table returns a copy of one group's offsets for a topic.
func (o *Offsets) Table(group, topic string) map[int32]int64 {
	o.mu.RLock()
	defer o.mu.RUnlock()
	src := o.table[offsetKey(topic, group)]
	out := make(map[int32]int64, len(src))
	for k, v := range src {
		out[k] = v
	}
	if off, ok := o.lmqGetLocked(topic, group); ok {
		out[0] = off
	}
	return out
}

// DeleteTopic drops every group's offsets for topic.
func (o *Offsets) DeleteTopic(topic string) {
	prefix := topic + "@"
	o.mu.Lock()
	if _, ok := o.lmq[topic]; ok {
		delete(o.lmq, topic)
		o.dirty.Store(true)
	}
	for k := range o.table {
		if strings.HasPrefix(k, prefix) && !strings.Contains(k[len(prefix):], "@") {
			delete(o.table, k)
			o.dirty.Store(true)
		}
	}
	for k := range o.resets {
		if strings.HasPrefix(k, prefix) && !strings.Contains(k[len(prefix):], "@") {
			delete(o.resets, k)
		}
	}
	o.anyResets.Store(len(o.resets) > 0)
	o.mu.Unlock()
}

// Groups returns the groups that have offsets for topic.
func (o *Offsets) Groups(topic string) []string {
	prefix := topic + "@"
	var out []string
	o.mu.RLock()
	for k := range o.table {
		if strings.HasPrefix(k, prefix) {
			out = append(out, k[len(prefix):])
		}
	}
	if e, ok := o.lmq[topic]; ok {
		out = append(out, e.group)
		for g := range e.more {
			out = append(out, g)
		}
	}
	o.mu.RUnlock()
	sort.Strings(out)
	return slices.Compact(out)
}

// load reads consumerOffset.json. An entry whose topic or group breaks the
// name rules, or a queue id outside [0, maxTopicQueueNums), is skipped with
// an error line naming it.
func (o *Offsets) Load(log zerolog.Logger) error {
	path := o.path
	if o.fallback != "" {
		if _, err := os.Stat(path); errors.Is(err, os.ErrNotExist) {
			path = o.fallback
		}
	}
	return config.LoadFile(path, log, func(b []byte) error {
		table, issues, err := decodeOffsetsFile(b, o.maxQueueNums)
		if err != nil {
			return err
		}
		logIssues(log, path, "key", issues)
		o.mu.Lock()
		defer o.mu.Unlock()
		for k, m := range table {
			o.putLoadedLocked(k, m)
		}
		if path != o.path {
			o.dirty.Store(true) // written to o.path at the next persist
		}
		return nil
	})
}

// decodeOffsetsFile parses consumerOffset.json's offsetTable into entries
// that keep the table's invariant.
func decodeOffsetsFile(b []byte, maxQueueNums int32) (map[string]map[int32]int64, []loadIssue, error) {
	var f struct {
		OffsetTable map[string]map[string]int64 `json:"offsetTable"`
	}
	if err := json.Unmarshal(b, &f); err != nil {
		return nil, nil, err
	}
	var issues []loadIssue
	table := make(map[string]map[int32]int64, len(f.OffsetTable))
	for key, queues := range f.OffsetTable {
		topic, group, ok := cutOffsetKey(key)
		if !ok {
			issues = append(issues, loadIssue{name: key, reason: "not topic@group"})
			continue
		}
		if err := message.ValidTopicName(topic); err != nil && !validLMQTopic(topic) {
			issues = append(issues, loadIssue{name: key, reason: err.Error()})
			continue
		}
		if err := message.ValidGroupName(group); err != nil {
			issues = append(issues, loadIssue{name: key, reason: err.Error()})
			continue
		}
		m := make(map[int32]int64, len(queues))
		for qs, off := range queues {
			qid, err := strconv.ParseInt(qs, 10, 32)
			if err != nil || qid < 0 || qid >= int64(maxQueueNums) {
				issues = append(issues, loadIssue{name: key, reason: fmt.Sprintf(
					"queue id %q not in [0, %d) (maxTopicQueueNums)", qs, maxQueueNums)})
				continue
			}
			m[int32(qid)] = off
		}
		table[key] = m
	}
	return table, issues, nil
}

// Marshal writes the fastjson form: sorted keys, unquoted queue ids.
func (o *Offsets) Marshal() []byte {
	o.mu.RLock()
	defer o.mu.RUnlock()
	keys := make([]string, 0, len(o.table)+o.lmqCountLocked())
	for k := range o.table {
		keys = append(keys, k)
	}
	o.lmqEachLocked(func(topic, group string, _ int64) { keys = append(keys, offsetKey(topic, group)) })
	sort.Strings(keys)
	keys = slices.Compact(keys) // an LMQ's other queues share its key
	b := []byte(`{"offsetTable":{`)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = remoting.AppendJSONString(b, k) // JSON's escapes, not Go's: the file must stay JSON
		b = append(b, ":{"...)
		q := o.table[k]
		if topic, group, _ := cutOffsetKey(k); isLMQQueue(topic, 0) {
			if off, ok := o.lmqGetLocked(topic, group); ok {
				q = maps.Clone(q)
				if q == nil {
					q = make(map[int32]int64, 1)
				}
				q[0] = off
			}
		}
		ids := make([]int, 0, len(q))
		for id := range q {
			ids = append(ids, int(id))
		}
		sort.Ints(ids)
		for j, id := range ids {
			if j > 0 {
				b = append(b, ',')
			}
			b = strconv.AppendInt(b, int64(id), 10)
			b = append(b, ':')
			b = strconv.AppendInt(b, q[int32(id)], 10)
		}
		b = append(b, '}')
	}
	return append(b, "}}"...)
}

func (o *Offsets) PersistIfDirty() error {
	return config.PersistIfDirty(o.path, &o.dirty, func() ([]byte, error) { return o.Marshal(), nil })
}

// The consumer-offset services (Apache's ConsumerManageProcessor and the
// queue-offset requests of AdminBrokerProcessor): QUERY_CONSUMER_OFFSET,
// UPDATE_CONSUMER_OFFSET, GET_MAX_OFFSET, GET_MIN_OFFSET,
// SEARCH_OFFSET_BY_TIMESTAMP and GET_EARLIEST_MSG_STORETIME.

// QueueOffsetRequest names a consumer group's queue, and for
// UPDATE_CONSUMER_OFFSET the offset to commit.
type QueueOffsetRequest struct {
	Group   string
	Topic   string
	QueueID int32
	// Offset is the offset to commit (CommitOffset only).
	Offset int64
	// SetZeroIfNotFound is the query's optional flag (QueryConsumerOffset
	// only): nil when the request does not carry it.
	SetZeroIfNotFound *bool
}

// Errors of the consumer-offset services (the sentinels their Refusals
// carry).
var ErrOffsetNotFound = errors.New("broker: consumer offset not found")

// MergeWith merges a master's offsets (GET_ALL_CONSUMER_OFFSET, bare keys
// quoted) over these, a topic@group at a time (Apache's putAll in
// syncConsumerOffset): a group the master does not know keeps its own.
func (o *Offsets) MergeWith(body []byte, log zerolog.Logger) error {
	table, issues, err := decodeOffsetsFile(body, o.maxQueueNums)
	if err != nil {
		return err
	}
	logIssues(log, "GET_ALL_CONSUMER_OFFSET", "key", issues)
	o.merge(table)
	return nil
}

// clone copies src's offsets of topic to dst (ConsumerOffsetManager.cloneOffset).
func (o *Offsets) Clone(src, dst, topic string) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if off, ok := o.lmqGetLocked(topic, src); ok {
		o.lmqSetLocked(topic, dst, off)
		o.dirty.Store(true)
	}
	from := o.table[offsetKey(topic, src)]
	if from == nil {
		return
	}
	to := make(map[int32]int64, len(from))
	for q, off := range from {
		to[q] = off
	}
	o.table[offsetKey(topic, dst)] = to
	o.dirty.Store(true)
}
