package tables

import (
	"fmt"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// GroupConfig is Apache 5.3.3's SubscriptionGroupConfig, fields in
// alphabetical order as fastjson writes them.
type GroupConfig struct {
	// Attributes are the group's attributes in force (groupattrs.go): a
	// request's alter them ("+name", "-name").
	Attributes             map[string]string `json:"attributes"`
	BrokerID               int64             `json:"brokerId"`
	ConsumeBroadcastEnable bool              `json:"consumeBroadcastEnable"`
	ConsumeEnable          bool              `json:"consumeEnable"`
	ConsumeFromMinEnable   bool              `json:"consumeFromMinEnable"`
	// ConsumeMessageOrderly marks a FIFO group: the proxy's pops for it
	// carry order=true, which write no checkpoint and so never revive into
	// a retry topic.
	ConsumeMessageOrderly          bool                 `json:"consumeMessageOrderly"`
	ConsumeTimeoutMinute           int32                `json:"consumeTimeoutMinute"`
	GroupName                      string               `json:"groupName"`
	GroupRetryPolicy               GroupRetryPolicy     `json:"groupRetryPolicy"`
	GroupSysFlag                   int32                `json:"groupSysFlag"`
	NotifyConsumerIdsChangedEnable bool                 `json:"notifyConsumerIdsChangedEnable"`
	RetryMaxTimes                  int32                `json:"retryMaxTimes"`
	RetryQueueNums                 int32                `json:"retryQueueNums"`
	SubscriptionDataSet            []SimpleSubscription `json:"subscriptionDataSet,omitempty"`
	WhichBrokerWhenConsumeSlowly   int64                `json:"whichBrokerWhenConsumeSlowly"`
}

// UnmarshalJSON reads a SubscriptionGroupConfig over Apache's defaults, as
// fastjson fills a new SubscriptionGroupConfig: a field left out of a
// request, the store's file or a master's table keeps its default.
func (gc *GroupConfig) UnmarshalJSON(b []byte) error {
	type fields GroupConfig // no UnmarshalJSON: no recursion
	f := fields(DefaultGroupConfig(""))
	if err := json.Unmarshal(b, &f); err != nil {
		return err
	}
	if f.Attributes == nil {
		f.Attributes = map[string]string{}
	}
	*gc = GroupConfig(f)
	return nil
}

// GroupRetryPolicy is Apache's GroupRetryPolicy: its type (CUSTOMIZED or
// EXPONENTIAL) and the policy of that type, absent for the defaults.
type GroupRetryPolicy struct {
	CustomizedRetryPolicy  *CustomizedRetryPolicy  `json:"customizedRetryPolicy,omitempty"`
	ExponentialRetryPolicy *ExponentialRetryPolicy `json:"exponentialRetryPolicy,omitempty"`
	Type                   string                  `json:"type"`
}

// CustomizedRetryPolicy is Apache's: the delay in milliseconds before each
// retry.
type CustomizedRetryPolicy struct {
	Next []int64 `json:"next"`
}

// ExponentialRetryPolicy is Apache's: initial × multiplier^n, at most max
// (milliseconds).
type ExponentialRetryPolicy struct {
	Initial    int64 `json:"initial"`
	Max        int64 `json:"max"`
	Multiplier int64 `json:"multiplier"`
}

// SimpleSubscription is Apache's SimpleSubscriptionData.
type SimpleSubscription struct {
	Expression     string `json:"expression"`
	ExpressionType string `json:"expressionType"`
	Topic          string `json:"topic"`
	Version        int64  `json:"version"`
}

// Retry policy types (GroupRetryPolicyType).
const (
	RetryPolicyCustomized  = "CUSTOMIZED"
	RetryPolicyExponential = "EXPONENTIAL"
)

// maxGroupRetryDelays bounds a customized policy's delays: Apache's
// default has 18 and retries end at maxReconsumeTimes (at most a few
// dozen in practice); the bound keeps a stored group small.
const maxGroupRetryDelays = 1024

// DefaultGroupConfig is Apache's default for an auto-created group.
func DefaultGroupConfig(name string) GroupConfig {
	return GroupConfig{
		Attributes:                     map[string]string{},
		GroupName:                      name,
		ConsumeEnable:                  true,
		ConsumeFromMinEnable:           true,
		ConsumeBroadcastEnable:         true,
		ConsumeTimeoutMinute:           15,
		GroupRetryPolicy:               GroupRetryPolicy{Type: RetryPolicyCustomized},
		RetryQueueNums:                 1,
		RetryMaxTimes:                  16,
		WhichBrokerWhenConsumeSlowly:   1,
		NotifyConsumerIdsChangedEnable: true,
	}
}

// systemGroupNames are the groups Apache 5.3.3's SubscriptionGroupManager
// puts in its table at every start, with the defaults (MixAll's names: the
// tools' consumer, the filter server's, the self test's, the ONS HTTP
// proxy's and API groups, and the transaction checker's). Tools and
// rocketmq-dashboard list them; a group of the same name in
// subscriptionGroup.json replaces its entry, as in Apache.
var systemGroupNames = []string{"TOOLS_CONSUMER", "FILTERSRV_CONSUMER", "SELF_TEST_C_GROUP", "CID_ONS-HTTP-PROXY",
	"CID_ONSAPI_PULL", "CID_ONSAPI_PERMISSION", "CID_ONSAPI_OWNER", message.TransGroup}

// PutSystem puts the start-up groups in the table (before load).
func (g *Groups) PutSystem() {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, name := range systemGroupNames {
		gc := DefaultGroupConfig(name)
		g.table[name] = &gc
	}
}

type groupsFile struct {
	DataVersion            remoting.DataVersion    `json:"dataVersion"`
	SubscriptionGroupTable map[string]*GroupConfig `json:"subscriptionGroupTable"`
	// ForbiddenTable is 5.x's group → topic → forbidden permission bits
	// (UPDATE_AND_GET_GROUP_FORBIDDEN, broker/admin).
	ForbiddenTable map[string]map[string]int32 `json:"forbiddenTable,omitempty"`
}

// Groups is the subscription group table, persisted as config/subscriptionGroup.json.
//
// Invariant: every group in the table passed ValidGroupName (so
// %RETRY%<group> and %DLQ%<group> are valid topic names) and has
// retryQueueNums in [0, maxQueueNums].
type Groups struct {
	path         string
	maxQueueNums int32 // maxTopicQueueNums: the retry topic's queues
	// autoCreate reports autoCreateSubscriptionGroup as it is now, read per
	// lookup as Apache's findSubscriptionGroupConfig does, so that
	// UPDATE_BROKER_CONFIG changes it at once.
	autoCreate func() bool

	mu        sync.RWMutex
	table     map[string]*GroupConfig // values never mutated after insertion
	forbidden map[string]map[string]int32
	// anyForbidden: forbidden has an entry (the pull path's fast check).
	anyForbidden atomic.Bool
	version      remoting.DataVersion
	dirty        atomic.Bool
}

// NewGroups is the table persisted at path; autoCreate reports
// autoCreateSubscriptionGroup as it is now.
func NewGroups(path string, maxQueueNums int32, autoCreate func() bool) *Groups {
	return &Groups{path: path, autoCreate: autoCreate, maxQueueNums: maxQueueNums, table: make(map[string]*GroupConfig)}
}

// Get returns a group's config; with autoCreateSubscriptionGroup a missing one
// is created with Apache's defaults, unless its name breaks the group rule
// (Apache's findSubscriptionGroupConfig returns null then).
func (g *Groups) Get(name string) (*GroupConfig, bool) {
	g.mu.RLock()
	gc, ok := g.table[name]
	g.mu.RUnlock()
	if ok || !g.autoCreates() || message.ValidGroupName(name) != nil {
		return gc, ok
	}
	def := DefaultGroupConfig(strings.Clone(name)) // not a view into a request (remoting/pool.go)
	g.mu.Lock()
	defer g.mu.Unlock()
	if gc, ok := g.table[name]; ok {
		return gc, true
	}
	g.table[def.GroupName] = &def
	g.version.Next()
	g.dirty.Store(true)
	return &def, true
}

func (g *Groups) autoCreates() bool { return g.autoCreate() }

// Contains reports whether the group is configured, never creating it.
func (g *Groups) Contains(name string) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	_, ok := g.table[name]
	return ok
}

// Lookup returns a group's config, never creating it.
func (g *Groups) Lookup(name string) (*GroupConfig, bool) {
	g.mu.RLock()
	defer g.mu.RUnlock()
	gc, ok := g.table[name]
	return gc, ok
}

// Put creates or replaces a group's config after check.
//
// The request's attributes alter the group's current ones as Apache's
// AttributeUtil does (groupattrs.go): "+name" adds or updates, "-name"
// deletes.
func (g *Groups) Put(gc GroupConfig) error {
	if err := g.check(&gc); err != nil {
		return err
	}
	gc.GroupName = strings.Clone(gc.GroupName)
	g.mu.Lock()
	var current map[string]string
	cur, exists := g.table[gc.GroupName]
	if exists {
		current = cur.Attributes
	}
	attrs, err := alterGroupAttributes(!exists, current, gc.Attributes)
	if err != nil {
		g.mu.Unlock()
		return err
	}
	gc.Attributes = attrs
	g.table[gc.GroupName] = &gc
	g.version.Next()
	g.dirty.Store(true)
	g.mu.Unlock()
	return nil
}

// check applies the group rule and bounds retryQueueNums, the queue count of
// the group's retry topic (0: no retries, as Apache).
func (g *Groups) check(gc *GroupConfig) error {
	if err := message.ValidGroupName(gc.GroupName); err != nil {
		return err
	}
	if gc.RetryQueueNums < 0 || gc.RetryQueueNums > g.maxQueueNums {
		return remoting.Refuse(remoting.InvalidParameter, message.ErrQueueNumsInvalid,
			"The retryQueueNums of group[%s] must be between 0 and %d (maxTopicQueueNums), got %d.",
			gc.GroupName, g.maxQueueNums, gc.RetryQueueNums)
	}
	return checkGroupFields(gc)
}

// checkGroupFields checks what Apache checks of the 5.x fields, in its
// words, and bounds what it leaves unbounded.
func checkGroupFields(gc *GroupConfig) error {
	if len(gc.Attributes) > maxGroupAttributes {
		return remoting.Refuse(remoting.SystemError, nil, "%d attributes, at most %d", len(gc.Attributes), maxGroupAttributes)
	}
	p := &gc.GroupRetryPolicy
	switch p.Type {
	case "":
		p.Type = RetryPolicyCustomized
	case RetryPolicyCustomized, RetryPolicyExponential:
	default:
		return remoting.Refuse(remoting.SystemError, nil, "unknown groupRetryPolicy type: %.64q", p.Type)
	}
	if c := p.CustomizedRetryPolicy; c != nil && len(c.Next) > maxGroupRetryDelays {
		return remoting.Refuse(remoting.InvalidParameter, nil, "the customizedRetryPolicy of group[%s] has %d delays, at most %d",
			gc.GroupName, len(c.Next), maxGroupRetryDelays)
	}
	for _, sd := range gc.SubscriptionDataSet {
		if err := message.ValidTopicName(sd.Topic); err != nil {
			return err
		}
	}
	return nil
}

// Delete removes a group's config; it reports whether it existed.
func (g *Groups) Delete(name string) bool {
	g.mu.Lock()
	_, ok := g.table[name]
	if ok {
		delete(g.table, name)
		g.version.Next()
		g.dirty.Store(true)
	}
	g.mu.Unlock()
	return ok
}

// GroupTable is the subscription group table at one data version
// (GET_ALL_SUBSCRIPTIONGROUP_CONFIG). Its configs must not be modified.
type GroupTable struct {
	DataVersion remoting.DataVersion
	Groups      map[string]*GroupConfig
}

func (g *Groups) Snapshot() GroupTable {
	g.mu.RLock()
	defer g.mu.RUnlock()
	t := GroupTable{DataVersion: g.version, Groups: make(map[string]*GroupConfig, len(g.table))}
	for k, v := range g.table {
		t.Groups[k] = v
	}
	return t
}

// replace takes a master's table and data version when the version differs
// from this table's (a slave's metadata sync).
func (g *Groups) replace(table map[string]*GroupConfig, v remoting.DataVersion) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.version == v {
		return
	}
	g.table = make(map[string]*GroupConfig, len(table))
	for name, gc := range table {
		g.table[name] = gc
	}
	g.version = v
	g.dirty.Store(true)
}

// MarshalWrapper encodes subscriptionGroup.json.
func (g *Groups) MarshalWrapper() ([]byte, error) {
	t := g.Snapshot()
	return json.Marshal(groupsFile{DataVersion: t.DataVersion, SubscriptionGroupTable: t.Groups,
		ForbiddenTable: g.ForbiddenCopy()})
}

// load reads subscriptionGroup.json. A group whose name breaks the group
// rule is skipped, a retryQueueNums out of bounds is brought into them; each
// with an error line naming the group.
func (g *Groups) Load(log zerolog.Logger) error {
	return config.LoadFile(g.path, log, func(b []byte) error {
		f, issues, err := decodeGroupsFile(b, g.maxQueueNums)
		if err != nil {
			return err
		}
		logIssues(log, g.path, "consumerGroup", issues)
		g.mu.Lock()
		defer g.mu.Unlock()
		for name, gc := range f.SubscriptionGroupTable {
			g.table[name] = gc
		}
		g.forbidden = f.ForbiddenTable
		g.anyForbidden.Store(len(g.forbidden) > 0)
		g.version = f.DataVersion
		return nil
	})
}

// decodeGroupsFile parses subscriptionGroup.json into configs that keep the
// table's invariant.
func decodeGroupsFile(b []byte, maxQueueNums int32) (groupsFile, []loadIssue, error) {
	var f groupsFile
	if err := json.Unmarshal(b, &f); err != nil {
		return f, nil, err
	}
	var issues []loadIssue
	for name, gc := range f.SubscriptionGroupTable {
		if gc == nil {
			delete(f.SubscriptionGroupTable, name)
			continue
		}
		if err := message.ValidGroupName(name); err != nil {
			issues = append(issues, loadIssue{name: name, reason: err.Error()})
			delete(f.SubscriptionGroupTable, name)
			continue
		}
		if n := min(max(gc.RetryQueueNums, 0), maxQueueNums); n != gc.RetryQueueNums {
			issues = append(issues, loadIssue{name: name, kept: true, reason: fmt.Sprintf(
				"retryQueueNums %d brought to %d (maxTopicQueueNums %d)", gc.RetryQueueNums, n, maxQueueNums)})
			gc.RetryQueueNums = n
		}
		gc.GroupName = name
	}
	for group, topics := range f.ForbiddenTable {
		if message.ValidGroupName(group) != nil || len(topics) == 0 {
			delete(f.ForbiddenTable, group)
			continue
		}
		for topic := range topics {
			if message.ValidTopicName(topic) != nil {
				delete(topics, topic)
			}
		}
	}
	return f, issues, nil
}

func (g *Groups) PersistIfDirty() error {
	return config.PersistIfDirty(g.path, &g.dirty, g.MarshalWrapper)
}

// ReplaceWith replaces the table with a master's
// (GET_ALL_SUBSCRIPTIONGROUP_CONFIG, bare keys quoted), entries checked as
// load checks them.
func (g *Groups) ReplaceWith(body []byte, log zerolog.Logger) error {
	f, issues, err := decodeGroupsFile(body, g.maxQueueNums)
	if err != nil {
		return err
	}
	logIssues(log, "GET_ALL_SUBSCRIPTIONGROUP_CONFIG", "consumerGroup", issues)
	g.replace(f.SubscriptionGroupTable, f.DataVersion)
	return nil
}
