package auth

import "strings"

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

var actionNames = [...]string{"Unknown", "All", "Any", "Pub", "Sub", "Create", "Update", "Delete", "Get", "List"}

func (a Action) String() string {
	if int(a) < len(actionNames) {
		return actionNames[a]
	}
	return "Unknown"
}

// ParseAction is Action.getByName: case-insensitive; ok false for a name
// Apache does not know (Apache's null).
func ParseAction(s string) (Action, bool) {
	for i, n := range actionNames {
		if strings.EqualFold(n, s) {
			return Action(i), true
		}
	}
	return 0, false
}

// Decision is Allow or Deny (0: Apache's null).
type Decision uint8

// The decisions, with Apache's codes.
const (
	Allow Decision = 1
	Deny  Decision = 2
)

func (d Decision) String() string {
	switch d {
	case Allow:
		return "Allow"
	case Deny:
		return "Deny"
	}
	return ""
}

// ParseDecision is Decision.getByName (0 for an unknown name).
func ParseDecision(s string) Decision {
	switch {
	case strings.EqualFold(s, "Allow"):
		return Allow
	case strings.EqualFold(s, "Deny"):
		return Deny
	}
	return 0
}

// PolicyType is Custom or Default (0: Apache's null).
type PolicyType uint8

// The policy types, with Apache's codes.
const (
	Custom  PolicyType = 1
	Default PolicyType = 2
)

func (p PolicyType) String() string {
	switch p {
	case Custom:
		return "Custom"
	case Default:
		return "Default"
	}
	return ""
}

// ParsePolicyType is PolicyType.getByName (0 for an unknown name).
func ParsePolicyType(s string) PolicyType {
	switch {
	case strings.EqualFold(s, "Custom"):
		return Custom
	case strings.EqualFold(s, "Default"):
		return Default
	}
	return 0
}
