package auth

import "strings"

// ResourceType is org.apache.rocketmq.common.resource.ResourceType.
type ResourceType uint8

// The resource types, with Apache's codes.
const (
	TypeUnknown ResourceType = iota
	TypeAny
	TypeCluster
	TypeNamespace
	TypeTopic
	TypeGroup
)

var typeNames = []string{"Unknown", "Any", "Cluster", "Namespace", "Topic", "Group"}

func (t ResourceType) String() string { return nameOf(typeNames, t) }

func parseType(s string) (ResourceType, bool) { return byName[ResourceType](typeNames, s) }

// Pattern is ResourcePattern: how a policy's resource name matches.
type Pattern uint8

// The patterns, with Apache's codes.
const (
	PatternAny      Pattern = 1 // "Topic:*"
	PatternLiteral  Pattern = 2 // "Topic:name"
	PatternPrefixed Pattern = 3 // "Topic:name*"
)

// Resource is a policy entry's resource, or a request's (always literal).
type Resource struct {
	Type    ResourceType
	Name    string
	Pattern Pattern
}

// The retry and dead-letter prefixes (MixAll, NamespaceUtil).
const (
	retryPrefix = "%RETRY%"
	dlqPrefix   = "%DLQ%"
)

func isRetry(topic string) bool { return strings.HasPrefix(topic, retryPrefix) }

// OfTopic is Resource.ofTopic.
func OfTopic(name string) Resource {
	return Resource{Type: TypeTopic, Name: name, Pattern: PatternLiteral}
}

// OfGroup is Resource.ofGroup: a retry topic names its group.
func OfGroup(name string) Resource {
	if isRetry(name) {
		name = name[len(retryPrefix):]
	}
	return Resource{Type: TypeGroup, Name: name, Pattern: PatternLiteral}
}

// ParseResource is Resource.of(resourceKey): "*", "Type:*", "Type:prefix*"
// or "Type:name", the type case-insensitive; ok false where Apache has
// null (a blank key, an unknown type).
func ParseResource(key string) (Resource, bool) {
	if strings.TrimSpace(key) == "" {
		return Resource{}, false
	}
	if key == "*" {
		return Resource{Type: TypeAny, Pattern: PatternAny}, true
	}
	typ, name, _ := strings.Cut(key, ":")
	t, ok := parseType(typ)
	if !ok {
		return Resource{}, false
	}
	switch {
	case name == "*":
		return Resource{Type: t, Pattern: PatternAny}, true
	case strings.HasSuffix(name, "*"):
		// StringUtils.substringBefore: up to the first asterisk.
		return Resource{Type: t, Name: name[:strings.IndexByte(name, '*')], Pattern: PatternPrefixed}, true
	}
	return Resource{Type: t, Name: name, Pattern: PatternLiteral}, true
}

// Key is Resource.getResourceKey.
func (r Resource) Key() string {
	if r.Type == TypeAny {
		return "*"
	}
	switch r.Pattern {
	case PatternAny:
		return r.Type.String() + ":*"
	case PatternPrefixed:
		return r.Type.String() + ":" + r.Name + "*"
	}
	return r.Type.String() + ":" + r.Name
}

// Match is Resource.isMatch: whether this policy resource covers the
// request's resource req.
func (r Resource) Match(req Resource) bool {
	if r.Type == TypeAny {
		return true
	}
	if r.Type != req.Type {
		return false
	}
	switch r.Pattern {
	case PatternAny:
		return true
	case PatternLiteral:
		return req.Name == r.Name
	case PatternPrefixed:
		return strings.HasPrefix(req.Name, r.Name)
	}
	return false
}
