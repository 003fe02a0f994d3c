package auth

import (
	"cmp"
	"net/netip"
)

// Request is one authorization context (DefaultAuthorizationContext): a
// resource the request uses and the actions it needs on it.
type Request struct {
	Resource Resource
	Actions  []Action
}

// matchResource .. matchSource are PolicyEntry's isMatch* filters.
func (e *Entry) matchActions(want []Action) bool {
	if len(e.Actions) == 0 {
		return false
	}
	for _, w := range want {
		if w == ActionAny {
			return true
		}
	}
	for _, w := range want {
		for _, a := range e.Actions {
			if a == w || a == ActionAll {
				return true
			}
		}
	}
	return false
}

func (e *Entry) matchSource(ip netip.Addr, host string) bool {
	if len(e.SourceIPs) == 0 {
		return true
	}
	if !ip.IsValid() {
		return false // Environment.of(blank) is null: no address to match
	}
	for _, s := range e.SourceIPs {
		if inRange(ip, host, s) {
			return true
		}
	}
	return false
}

// usesSourceIPs says whether any entry names source addresses.
func (a *Acl) usesSourceIPs() bool {
	for _, p := range a.Policies {
		for _, e := range p.Entries {
			if len(e.SourceIPs) > 0 {
				return true
			}
		}
	}
	return false
}

// decide is AclAuthorizationHandler's matchPolicyEntries: the Custom
// policy's entries that match, else the Default policy's, sorted by
// comparePolicyEntries; the first decides. nil: none matched.
func (a *Acl) decide(r Request, ip netip.Addr, host string, scratch []*Entry) *Entry {
	matched := scratch[:0]
	for _, t := range [2]PolicyType{Custom, Default} {
		if p := a.policy(t); p != nil {
			for _, e := range p.Entries {
				if e.Resource.Match(r.Resource) && e.matchActions(r.Actions) && e.matchSource(ip, host) {
					matched = append(matched, e)
				}
			}
		}
		if len(matched) > 0 {
			break
		}
	}
	if len(matched) == 0 {
		return nil
	}
	sortJava(matched, compareEntries)
	return matched[0]
}

// compareEntries is comparePolicyEntries, kept as Apache wrote it: an
// Any resource goes after a typed one; of two prefixes the shorter goes
// first; of two different patterns the first argument's is "smaller"
// when it is literal or prefixed (Apache's branch assigns 1 then -1);
// then an Allow goes before a Deny (compare is 1 when the first is Deny,
// whatever the second).
func compareEntries(o1, o2 *Entry) int {
	r1, r2 := o1.Resource, o2.Resource
	c := 0
	switch {
	case r1.Type != r2.Type:
		if r1.Type == TypeAny {
			c = 1
		}
		if r2.Type == TypeAny {
			c = -1
		}
	case r1.Pattern == r2.Pattern:
		if r1.Pattern == PatternPrefixed {
			c = cmp.Compare(len16(r1.Name), len16(r2.Name))
		}
	default:
		if r1.Pattern == PatternLiteral || r1.Pattern == PatternPrefixed {
			c = -1
		}
	}
	if c != 0 {
		return c
	}
	switch {
	case o1.Decision == Deny:
		return 1
	case o2.Decision == Deny:
		return -1
	}
	return 0
}

// len16 is String.length: UTF-16 code units.
func len16(s string) int {
	n := 0
	for _, r := range s {
		n++
		if r >= 0x10000 {
			n++
		}
	}
	return n
}
