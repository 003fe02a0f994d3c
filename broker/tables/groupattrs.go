package tables

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// attribute is one of Apache's Attribute kinds: whether an existing value
// may change, and verify, "" or what Apache's verify throws, in its words.
type attribute interface {
	mutable() bool
	verify(value string) string
}

// longRange is Apache's LongRangeAttribute.
type longRange struct {
	changeable bool
	min, max   int64
	def        int64
}

func (a longRange) mutable() bool { return a.changeable }

func (a longRange) verify(value string) string {
	v, err := strconv.ParseInt(value, 10, 64)
	if err != nil {
		return fmt.Sprintf("For input string: %.64q", value)
	}
	if v < a.min || v > a.max {
		return fmt.Sprintf("value is not in range(%d, %d)", a.min, a.max)
	}
	return ""
}

// boolAttr is Apache's BooleanAttribute.
type boolAttr struct{}

func (boolAttr) mutable() bool { return true }

func (boolAttr) verify(value string) string {
	if !strings.EqualFold(value, "true") && !strings.EqualFold(value, "false") {
		return "boolean attribute format is wrong."
	}
	return ""
}

// enumAttr is Apache's EnumAttribute; printed is its set as Java prints it.
type enumAttr struct {
	values  []string
	printed string
}

func (enumAttr) mutable() bool { return true }

func (a enumAttr) verify(value string) string {
	for _, v := range a.values {
		if v == value {
			return ""
		}
	}
	return "value is not in set: " + a.printed
}

// stringAttr is Apache's StringAttribute: any value.
type stringAttr struct{}

func (stringAttr) mutable() bool { return true }

func (stringAttr) verify(string) string { return "" }

// Group attributes (Apache 5.5's SubscriptionGroupAttributes).
const (
	// AttrPriorityFactor is the share of a group's pops, in percent, that
	// take a PRIORITY topic's queues highest priority first (Apache 5.4's
	// priority.factor); the others read them as any topic's, from a random
	// queue.
	AttrPriorityFactor = "priority.factor"
	// AttrLiteBindTopic makes a group a lite group and names its LITE topic.
	AttrLiteBindTopic = "lite.bind.topic"
	// AttrLiteSubModel is Shared or Exclusive: an Exclusive group's client
	// that subscribes to a lite topic takes it from the group's others.
	AttrLiteSubModel = "lite.sub.model"
	// AttrLiteResetOnExclusive resets the lite topic's offset to 0 when an
	// Exclusive subscription takes it over.
	AttrLiteResetOnExclusive = "lite.sub.reset.offset.exclusive"
	// AttrLiteResetOnUnsubscribe resets the lite topic's offset to 0 when a
	// client unsubscribes from it.
	AttrLiteResetOnUnsubscribe = "lite.sub.reset.offset.unsubscribe"
	// AttrLiteClientQuota bounds the lite topics one client subscribes to.
	AttrLiteClientQuota = "lite.sub.client.quota"
	// AttrLiteMaxEventCount bounds one client's queue of lite topics with
	// messages to pop.
	AttrLiteMaxEventCount = "lite.sub.client.max.event.cnt"
	// AttrLiteWildcard, present, subscribes the group's clients to every
	// lite topic of its topic.
	AttrLiteWildcard = "lite.sub.wildcard"
)

// maxGroupAttributes bounds a request's attributes (Apache has no bound);
// past the ones served, any request fails anyway.
const maxGroupAttributes = 64

// groupAttributes are Apache 5.5's SubscriptionGroupAttributes.
var groupAttributes = map[string]attribute{
	AttrPriorityFactor:         longRange{changeable: true, min: 0, max: 100, def: 100},
	AttrLiteBindTopic:          stringAttr{},
	AttrLiteSubModel:           enumAttr{values: []string{"Shared", "Exclusive"}, printed: "[Shared, Exclusive]"},
	AttrLiteResetOnExclusive:   boolAttr{},
	AttrLiteResetOnUnsubscribe: boolAttr{},
	AttrLiteClientQuota:        longRange{changeable: true, min: -1, max: math.MaxInt64, def: 2000},
	AttrLiteMaxEventCount:      longRange{changeable: true, min: 10, max: math.MaxInt64, def: 400},
	AttrLiteWildcard:           stringAttr{},
}

// PriorityFactor is the group's priority.factor (100 when unset or not a
// number, as Apache's getPriorityFactor).
func (gc *GroupConfig) PriorityFactor() int {
	v, err := strconv.ParseInt(gc.Attributes[AttrPriorityFactor], 10, 64)
	if err != nil {
		return 100
	}
	return int(max(min(v, 100), 0))
}

// LiteBindTopic is the LITE topic of a lite group, "" for any other group.
func (gc *GroupConfig) LiteBindTopic() string { return gc.Attributes[AttrLiteBindTopic] }

// LiteExclusive reports a lite group whose lite topics each have one
// subscriber.
func (gc *GroupConfig) LiteExclusive() bool { return gc.Attributes[AttrLiteSubModel] == "Exclusive" }

// LiteResetOnExclusive and LiteResetOnUnsubscribe read their attributes as
// Java's Boolean.parseBoolean.
func (gc *GroupConfig) LiteResetOnExclusive() bool {
	return strings.EqualFold(gc.Attributes[AttrLiteResetOnExclusive], "true")
}

func (gc *GroupConfig) LiteResetOnUnsubscribe() bool {
	return strings.EqualFold(gc.Attributes[AttrLiteResetOnUnsubscribe], "true")
}

// LiteClientQuota is the most lite topics one client of the group may
// subscribe to (2000 unset; -1 unbounded), clamped to an int32.
func (gc *GroupConfig) LiteClientQuota() int32 {
	v, err := strconv.ParseInt(gc.Attributes[AttrLiteClientQuota], 10, 64)
	if err != nil {
		return 2000
	}
	return int32(max(min(v, math.MaxInt32), -1))
}

// LiteMaxEventCount is the capacity of a client's lite event queue, or -1
// when unset (the broker's maxClientEventCount then applies: Apache does
// not apply the attribute's default).
func (gc *GroupConfig) LiteMaxEventCount() int {
	v, err := strconv.ParseInt(gc.Attributes[AttrLiteMaxEventCount], 10, 32)
	if err != nil {
		return -1
	}
	return int(v)
}

// LiteWildcard reports a lite group subscribed to every lite topic of its
// topic.
func (gc *GroupConfig) LiteWildcard() bool {
	_, ok := gc.Attributes[AttrLiteWildcard]
	return ok
}

// alterGroupAttributes is Apache's AttributeUtil.alterCurrentAttributes: a
// request's keys are "+name" (add or update) or "-name" (delete); a group
// being created takes only "+". Refusals are SYSTEM_ERROR with Apache's
// RuntimeException text. current is not modified.
func alterGroupAttributes(create bool, current, req map[string]string) (map[string]string, error) {
	refuse := func(format string, args ...any) error {
		return remoting.Refuse(remoting.SystemError, nil, format, args...)
	}
	out := make(map[string]string, len(current)+len(req))
	for k, v := range current {
		out[k] = v
	}
	seen := make(map[string]bool, len(req))
	for key, value := range req {
		if key == "" {
			return nil, refuse("kv string format wrong.")
		}
		name := key[1:]
		if name == "" || strings.ContainsAny(name, "+-") {
			return nil, refuse("kv string format wrong.")
		}
		if seen[name] {
			return nil, refuse("alter duplication key. key: %.256s", name)
		}
		seen[name] = true
		attr, known := groupAttributes[name]
		switch {
		case create && key[0] != '+':
			return nil, refuse("only add attribute is supported while creating topic. key: %.256s", name)
		case key[0] == '-':
			if _, ok := current[name]; !ok {
				return nil, refuse("attempt to delete a nonexistent key: %.256s", name)
			}
		case key[0] != '+':
			return nil, refuse("wrong format key: %.256s", name)
		}
		if !known {
			return nil, refuse("unsupported key: %.256s", name)
		}
		if !create && !attr.mutable() {
			return nil, refuse("attempt to update an unchangeable attribute. key: %.256s", name)
		}
		if key[0] == '-' {
			delete(out, name)
			continue
		}
		if remark := attr.verify(value); remark != "" {
			return nil, refuse("%s", remark)
		}
		out[name] = value
	}
	return out, nil
}
