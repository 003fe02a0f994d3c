package namesrv

// kvConfig.json, Apache's KVConfigSerializeWrapper:
//
//	{"configTable":{"ORDER_TOPIC_CONFIG":{"TopicA":"broker-a:4;broker-b:4"}}}

import (
	"fmt"
	"strings"
	"sync"

	"github.com/rocketgo/rocketgo/config"
)

// NamespaceOrderTopicConfig holds per-topic orderTopicConf strings.
const NamespaceOrderTopicConfig = "ORDER_TOPIC_CONFIG"

// KV is Apache's KVConfigManager: namespace → key → value, persisted to one
// JSON file. Put and Delete only mark the table dirty; the Server's
// housekeeping goroutine calls Persist, so no event loop waits on a disk.
type KV struct {
	path  string
	dirty chan struct{} // cap 1: a pending persist

	mu    sync.RWMutex
	table map[string]map[string]string
}

// NewKV returns an empty table persisted at path.
func NewKV(path string) *KV {
	return &KV{path: path, dirty: make(chan struct{}, 1), table: make(map[string]map[string]string)}
}

type kvFile struct {
	ConfigTable map[string]map[string]string `json:"configTable"`
}

// Load reads the file at the KV's path (or the .bak Apache leaves mid-write);
// a missing file is an empty table.
func (kv *KV) Load() error {
	b, err := config.ReadFile(kv.path)
	if err != nil {
		return fmt.Errorf("load kv config %s: %w", kv.path, err)
	}
	if b == nil {
		return nil
	}
	var f kvFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("load kv config %s: %w", kv.path, err)
	}
	kv.mu.Lock()
	defer kv.mu.Unlock()
	for ns, m := range f.ConfigTable {
		if m == nil {
			continue
		}
		kv.table[ns] = m
	}
	return nil
}

// Put sets a value.
func (kv *KV) Put(namespace, key, value string) {
	// Kept for good: not views into a request (remoting/pool.go).
	namespace, key, value = strings.Clone(namespace), strings.Clone(key), strings.Clone(value)
	kv.mu.Lock()
	m := kv.table[namespace]
	if m == nil {
		m = make(map[string]string)
		kv.table[namespace] = m
	}
	m[key] = value
	kv.mu.Unlock()
	kv.markDirty()
}

// Delete removes a key; the namespace stays, as in Apache.
func (kv *KV) Delete(namespace, key string) {
	kv.mu.Lock()
	if m := kv.table[namespace]; m != nil {
		delete(m, key)
	}
	kv.mu.Unlock()
	kv.markDirty()
}

// Value returns a value or ErrKVNotFound.
func (kv *KV) Value(namespace, key string) (string, error) {
	kv.mu.RLock()
	defer kv.mu.RUnlock()
	v, ok := kv.table[namespace][key]
	if !ok {
		return "", ErrKVNotFound
	}
	return v, nil
}

// AppendNamespace appends the namespace as a KVTable body, or returns
// ErrKVNotFound when the namespace does not exist.
func (kv *KV) AppendNamespace(dst []byte, namespace string) ([]byte, error) {
	kv.mu.RLock()
	defer kv.mu.RUnlock()
	m, ok := kv.table[namespace]
	if !ok {
		return dst, ErrKVNotFound
	}
	return AppendKVTable(dst, m), nil
}

func (kv *KV) markDirty() {
	select {
	case kv.dirty <- struct{}{}:
	default:
	}
}

// Persist writes the table durably, the previous content kept as .bak.
func (kv *KV) Persist() error {
	kv.mu.RLock()
	b, err := json.Marshal(kvFile{ConfigTable: kv.table})
	kv.mu.RUnlock()
	if err != nil {
		return fmt.Errorf("persist kv config: %w", err)
	}
	if err := config.WriteFile(kv.path, b); err != nil {
		return fmt.Errorf("persist kv config %s: %w", kv.path, err)
	}
	return nil
}
