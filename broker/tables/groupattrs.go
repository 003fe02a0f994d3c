package tables

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/rocketgo/rocketgo/remoting"
)

// longRange is one of Apache's LongRangeAttribute.
type longRange struct {
	changeable bool
	min, max   int64
	def        int64
}

// verify is LongRangeAttribute.verify: "" or what it throws, in its
// words (a value that is not a long fails Java's Long.parseLong).
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

// AttrPriorityFactor is the share of a group's pops, in percent, that take a
// PRIORITY topic's queues highest priority first (Apache 5.4's
// priority.factor); the others read them as any topic's, from a random
// queue.
const AttrPriorityFactor = "priority.factor"

// maxGroupAttributes bounds a request's attributes (Apache has no bound);
// past the ones served, any request fails anyway.
const maxGroupAttributes = 64

// groupAttributes are the subscription group attributes served: Apache
// 5.5's SubscriptionGroupAttributes less the lite.* ones, refused as
// unsupported keys until lite topics are served.
var groupAttributes = map[string]longRange{
	AttrPriorityFactor: {changeable: true, min: 0, max: 100, def: 100},
}

// PriorityFactor is the group's priority.factor (100 when unset or not a
// number, as Apache's getPriorityFactor).
func (gc *GroupConfig) PriorityFactor() int {
	v, err := strconv.ParseInt(gc.Attributes[AttrPriorityFactor], 10, 64)
	if err != nil {
		return int(groupAttributes[AttrPriorityFactor].def)
	}
	return int(max(min(v, 100), 0))
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
		if !create && !attr.changeable {
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
