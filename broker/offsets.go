package broker

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/config"
)

// Offsets holds consumer groups' committed offsets (next offset to consume per
// topic queue), persisted as config/consumerOffset.json every
// flushConsumerOffsetInterval and at shutdown.
//
// File shape (fastjson, bare integer keys):
//
//	{"offsetTable":{"TopicTest@groupA":{0:250,1:249}}}
type Offsets struct {
	path string

	mu    sync.RWMutex
	table map[string]map[int32]int64 // "topic@group" → queueId → offset
	dirty atomic.Bool
}

func newOffsets(path string) *Offsets {
	return &Offsets{path: path, table: make(map[string]map[int32]int64)}
}

func offsetKey(topic, group string) string { return topic + "@" + group }

// Commit stores a group's offset for a queue.
func (o *Offsets) Commit(group, topic string, queueID int32, offset int64) {
	key := offsetKey(topic, group)
	o.mu.Lock()
	q := o.table[key]
	if q == nil {
		q = make(map[int32]int64)
		o.table[key] = q
	}
	q[queueID] = offset
	o.dirty.Store(true)
	o.mu.Unlock()
}

// Query returns a group's committed offset for a queue.
func (o *Offsets) Query(group, topic string, queueID int32) (int64, bool) {
	o.mu.RLock()
	defer o.mu.RUnlock()
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
	return out
}

// DeleteTopic drops every group's offsets for topic.
func (o *Offsets) DeleteTopic(topic string) {
	prefix := topic + "@"
	o.mu.Lock()
	for k := range o.table {
		if strings.HasPrefix(k, prefix) && !strings.Contains(k[len(prefix):], "@") {
			delete(o.table, k)
			o.dirty.Store(true)
		}
	}
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
	o.mu.RUnlock()
	sort.Strings(out)
	return out
}

func (o *Offsets) load() error {
	b, err := config.ReadFile(o.path)
	if err != nil || b == nil {
		return err
	}
	var f struct {
		OffsetTable map[string]map[string]int64 `json:"offsetTable"`
	}
	if err := jsoniter.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("decode %s: %w", o.path, err)
	}
	o.mu.Lock()
	defer o.mu.Unlock()
	for key, queues := range f.OffsetTable {
		m := make(map[int32]int64, len(queues))
		for qs, off := range queues {
			qid, err := strconv.ParseInt(qs, 10, 32)
			if err != nil {
				return fmt.Errorf("decode %s: queue id %q of %s", o.path, qs, key)
			}
			m[int32(qid)] = off
		}
		o.table[key] = m
	}
	return nil
}

// marshal writes the fastjson form: sorted keys, unquoted queue ids.
func (o *Offsets) marshal() []byte {
	o.mu.RLock()
	defer o.mu.RUnlock()
	keys := make([]string, 0, len(o.table))
	for k := range o.table {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	b := []byte(`{"offsetTable":{`)
	for i, k := range keys {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, k)
		b = append(b, ":{"...)
		q := o.table[k]
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

func (o *Offsets) persistIfDirty() error {
	return persistIfDirty(o.path, &o.dirty, func() ([]byte, error) { return o.marshal(), nil })
}
