package broker

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	jsoniter "github.com/json-iterator/go"

	"github.com/rocketgo/rocketgo/config"
)

// GroupConfig is Apache's SubscriptionGroupConfig (4.9 fields), alphabetical.
type GroupConfig struct {
	BrokerID                       int64  `json:"brokerId"`
	ConsumeBroadcastEnable         bool   `json:"consumeBroadcastEnable"`
	ConsumeEnable                  bool   `json:"consumeEnable"`
	ConsumeFromMinEnable           bool   `json:"consumeFromMinEnable"`
	GroupName                      string `json:"groupName"`
	NotifyConsumerIdsChangedEnable bool   `json:"notifyConsumerIdsChangedEnable"`
	RetryMaxTimes                  int32  `json:"retryMaxTimes"`
	RetryQueueNums                 int32  `json:"retryQueueNums"`
	WhichBrokerWhenConsumeSlowly   int64  `json:"whichBrokerWhenConsumeSlowly"`
}

// DefaultGroupConfig is Apache's default for an auto-created group.
func DefaultGroupConfig(name string) GroupConfig {
	return GroupConfig{
		GroupName:                      name,
		ConsumeEnable:                  true,
		ConsumeFromMinEnable:           true,
		ConsumeBroadcastEnable:         true,
		RetryQueueNums:                 1,
		RetryMaxTimes:                  16,
		WhichBrokerWhenConsumeSlowly:   1,
		NotifyConsumerIdsChangedEnable: true,
	}
}

type groupsFile struct {
	DataVersion            DataVersion             `json:"dataVersion"`
	SubscriptionGroupTable map[string]*GroupConfig `json:"subscriptionGroupTable"`
}

// Groups is the subscription group table, persisted as config/subscriptionGroup.json.
type Groups struct {
	path       string
	autoCreate bool

	mu      sync.RWMutex
	table   map[string]*GroupConfig // values never mutated after insertion
	version DataVersion
	dirty   atomic.Bool
}

func newGroups(path string, autoCreate bool) *Groups {
	return &Groups{path: path, autoCreate: autoCreate, table: make(map[string]*GroupConfig)}
}

// Get returns a group's config; with autoCreateSubscriptionGroup a missing one
// is created with Apache's defaults.
func (g *Groups) Get(name string) (*GroupConfig, bool) {
	g.mu.RLock()
	gc, ok := g.table[name]
	g.mu.RUnlock()
	if ok || !g.autoCreate {
		return gc, ok
	}
	def := DefaultGroupConfig(strings.Clone(name)) // not a view into a request (remoting/pool.go)
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc, ok := g.table[name]; ok {
		return gc, true
	}
	g.table[def.GroupName] = &def
	g.version.next()
	g.dirty.Store(true)
	return &def, true
}

// Contains reports whether the group is configured, never creating it.
func (g *Groups) Contains(name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	_, ok := g.table[name]
	return ok
}

// Put creates or replaces a group's config.
func (g *Groups) Put(gc GroupConfig) {
	g.mu.Lock()
	g.table[gc.GroupName] = &gc
	g.version.next()
	g.dirty.Store(true)
	g.mu.Unlock()
}

// Delete removes a group's config.
func (g *Groups) Delete(name string) {
	g.mu.Lock()
	if _, ok := g.table[name]; ok {
		delete(g.table, name)
		g.version.next()
		g.dirty.Store(true)
	}
	g.mu.Unlock()
}

// MarshalWrapper encodes subscriptionGroup.json / GET_ALL_SUBSCRIPTIONGROUP_CONFIG.
func (g *Groups) MarshalWrapper() ([]byte, error) {
	g.mu.RLock()
	f := groupsFile{DataVersion: g.version, SubscriptionGroupTable: make(map[string]*GroupConfig, len(g.table))}
	for k, v := range g.table {
		f.SubscriptionGroupTable[k] = v
	}
	g.mu.RUnlock()
	return jsoniter.Marshal(f)
}

func (g *Groups) load() error {
	b, err := config.ReadFile(g.path)
	if err != nil || b == nil {
		return err
	}
	var f groupsFile
	if err := jsoniter.Unmarshal(b, &f); err != nil {
		return fmt.Errorf("decode %s: %w", g.path, err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for name, gc := range f.SubscriptionGroupTable {
		if gc != nil {
			gc.GroupName = name
			g.table[name] = gc
		}
	}
	g.version = f.DataVersion
	return nil
}

func (g *Groups) persistIfDirty() error {
	return persistIfDirty(g.path, &g.dirty, g.MarshalWrapper)
}
