package auth

import (
	"net/netip"
	"strings"
)

// What the ACL codes do to one ACL, apart from where the ACLs are kept:
// the broker's Service keeps them in its files, the controller in its raft
// log; both answer the same.

// ParseAcl is AclConverter.convertAcl(AclInfo) with
// AuthorizationMetadataManagerImpl's checks: the subject is the body's,
// else fallback (the header's); an error is Apache's message.
func ParseAcl(i AclInfo, fallback string) (*Acl, error) { return aclOf(i, fallback) }

// Merged is createAcl / updateAcl: in's policies merged into a (nil: the
// subject has none yet), a new Acl; a is not changed.
func (a *Acl) Merged(in *Acl) *Acl {
	if a == nil {
		return in
	}
	n := a.clone()
	n.merge(in.Policies)
	return n
}

// Without is deleteAcl: a new Acl without resource's entry in the policy
// of policyType (Custom by default); nil when nothing is left, or when
// resource is blank (the whole ACL goes).
func (a *Acl) Without(policyType, resource string) *Acl {
	res, ok := ParseResource(resource)
	if !ok {
		return nil
	}
	pt := ParsePolicyType(policyType)
	if pt == 0 {
		pt = Custom
	}
	n := a.clone()
	n.deleteEntry(pt, res)
	if len(n.Policies) == 0 {
		return nil
	}
	return n
}

// Allows reports whether the entry that decides r from ip (Apache's
// matchPolicyEntries) is an Allow; none deciding is a refusal.
func (a *Acl) Allows(r Request, ip netip.Addr) bool {
	if a == nil {
		return false
	}
	var scratch [8]*Entry
	e := a.decide(r, ip, "", scratch[:0])
	return e != nil && e.Decision == Allow
}

// OfCluster is Resource.ofCluster.
func OfCluster(name string) Resource {
	return Resource{Type: TypeCluster, Name: name, Pattern: PatternLiteral}
}

// FilterAcls is listAcl: the ACLs whose subject contains subjectFilter, in
// subject order; with resourceFilter, only the entries whose resource
// contains it (unless the subject itself contains it, Apache's test),
// dropping what is left empty.
func FilterAcls(acls map[string]*Acl, subjectFilter, resourceFilter string) []AclInfo {
	var out []AclInfo
	for _, k := range sortedKeys(acls) {
		key := SubjectKey(k)
		if !isBlank(subjectFilter) && !strings.Contains(key, subjectFilter) {
			continue
		}
		info := acls[k].Info()
		if !isBlank(resourceFilter) && !strings.Contains(key, resourceFilter) {
			kept := info.Policies[:0]
			for _, p := range info.Policies {
				if len(p.Entries) == 0 {
					kept = append(kept, p)
					continue
				}
				es := p.Entries[:0]
				for _, e := range p.Entries {
					if strings.Contains(e.Resource, resourceFilter) {
						es = append(es, e)
					}
				}
				p.Entries = es
				if len(es) > 0 {
					kept = append(kept, p)
				}
			}
			info.Policies = kept
		}
		if len(info.Policies) > 0 {
			out = append(out, info)
		}
	}
	return out
}
