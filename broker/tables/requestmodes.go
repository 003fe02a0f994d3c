package tables

// The message request modes (Apache 5.x MessageRequestModeManager): per
// topic and consumer group, PULL or POP, persisted as
// config/messageRequestMode.json in Apache's shape.

import (
	"fmt"
	"os"
	"sync"
	"sync/atomic"

	"github.com/rocketgo/rocketgo/config"
)

// RequestMode is one topic and group's mode (SetMessageRequestModeRequestBody).
type RequestMode struct {
	ConsumerGroup    string `json:"consumerGroup"`
	Mode             string `json:"mode"` // PULL or POP
	PopShareQueueNum int32  `json:"popShareQueueNum"`
	Topic            string `json:"topic"`
}

// RequestModes is the mode table, persisted as config/messageRequestMode.json.
type RequestModes struct {
	path     string
	onChange func() // the table changed: write it soon
	mu       sync.Mutex
	table    map[string]map[string]RequestMode // topic → group → mode
	dirty    atomic.Bool
}

type requestModesFile struct {
	MessageRequestModeMap map[string]map[string]RequestMode `json:"messageRequestModeMap"`
}

// NewRequestModes is an empty table kept in path; onChange runs after every
// change.
func NewRequestModes(path string, onChange func()) *RequestModes {
	return &RequestModes{path: path, onChange: onChange, table: make(map[string]map[string]RequestMode)}
}

// Load reads the table's file, if there is one.
func (m *RequestModes) Load() error {
	b, err := os.ReadFile(m.path)
	if os.IsNotExist(err) {
		return nil
	}
	if err != nil {
		return err
	}
	var f requestModesFile
	if err := json.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("%s: %w", m.path, err)
	}
	if f.MessageRequestModeMap != nil {
		m.table = f.MessageRequestModeMap
	}
	return nil
}

// Marshal is the table in Apache's MessageRequestModeManager shape.
func (m *RequestModes) Marshal() ([]byte, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return json.Marshal(requestModesFile{MessageRequestModeMap: m.table})
}

// PersistIfDirty writes the file when the table changed since.
func (m *RequestModes) PersistIfDirty() error {
	return config.PersistIfDirty(m.path, &m.dirty, m.Marshal)
}

// Get is topic and group's mode; false when none was set.
func (m *RequestModes) Get(topic, group string) (RequestMode, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	v, ok := m.table[topic][group]
	return v, ok
}

// Set records r's mode for its topic and group.
func (m *RequestModes) Set(r RequestMode) {
	m.mu.Lock()
	if m.table[r.Topic] == nil {
		m.table[r.Topic] = make(map[string]RequestMode)
	}
	m.table[r.Topic][r.ConsumerGroup] = r
	m.mu.Unlock()
	m.dirty.Store(true)
	m.onChange()
}
