package auth

import "strings"

// Apache's enums are (code, name) pairs read by name case-insensitively
// (getByName) and written by name; here each is a uint8 code indexing its
// names, 0 being Apache's null where Apache has no code 0.

// nameOf is v's name ("" for none).
func nameOf[T ~uint8](names []string, v T) string {
	if int(v) < len(names) {
		return names[v]
	}
	return ""
}

// byName is getByName: the code of s, ok false where Apache has null.
func byName[T ~uint8](names []string, s string) (T, bool) {
	for i, n := range names {
		if n != "" && strings.EqualFold(n, s) {
			return T(i), true
		}
	}
	return 0, false
}

// Action is org.apache.rocketmq.common.action.Action.
type Action uint8

// The actions, with Apache's codes.
const (
	ActionUnknown Action = iota
	ActionAll
	ActionAny
	ActionPub
	ActionSub
	ActionCreate
	ActionUpdate
	ActionDelete
	ActionGet
	ActionList
)

var actionNames = []string{"Unknown", "All", "Any", "Pub", "Sub", "Create", "Update", "Delete", "Get", "List"}

func (a Action) String() string { return nameOf(actionNames, a) }

// ParseAction is Action.getByName.
func ParseAction(s string) (Action, bool) { return byName[Action](actionNames, s) }

// Decision is Allow or Deny (0: Apache's null).
type Decision uint8

// The decisions, with Apache's codes.
const (
	Allow Decision = 1
	Deny  Decision = 2
)

var decisionNames = []string{"", "Allow", "Deny"}

func (d Decision) String() string { return nameOf(decisionNames, d) }

// ParseDecision is Decision.getByName (0 for an unknown name).
func ParseDecision(s string) Decision { d, _ := byName[Decision](decisionNames, s); return d }

// PolicyType is Custom or Default (0: Apache's null).
type PolicyType uint8

// The policy types, with Apache's codes.
const (
	Custom  PolicyType = 1
	Default PolicyType = 2
)

var policyTypeNames = []string{"", "Custom", "Default"}

func (p PolicyType) String() string { return nameOf(policyTypeNames, p) }

// ParsePolicyType is PolicyType.getByName (0 for an unknown name).
func ParsePolicyType(s string) PolicyType { p, _ := byName[PolicyType](policyTypeNames, s); return p }
