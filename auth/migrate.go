package auth

import (
	"strings"

	"github.com/rocketgo/rocketgo/acl"
)

// Migrate is AuthMigrator.doMigrate for one plain_acl.yml account: a
// user (Super for an admin) and an ACL built from its permissions,
// unless the user exists.
func (v *Service) Migrate(a acl.PlainAccount) error {
	if isBlank(a.AccessKey) || v.s.user(a.AccessKey) != nil {
		return nil
	}
	u := &User{Username: a.AccessKey, Password: a.SecretKey, Type: Normal}
	if a.Admin {
		u.Type = Super
	}
	if err := v.createUser(u); err != nil {
		return err
	}
	var custom, def []*Entry
	for _, list := range []struct {
		perms []string
		of    func(string) Resource
	}{{a.TopicPerms, OfTopic}, {a.GroupPerms, OfGroup}} {
		for _, tp := range list.perms {
			parts := splitNonEmpty(tp, "=")
			if len(parts) != 2 {
				continue
			}
			perm := strings.TrimSpace(parts[1])
			custom = append(custom, &Entry{Resource: list.of(strings.TrimSpace(parts[0])), Actions: v1Actions(perm), Decision: v1Decision(perm)})
		}
	}
	for _, d := range []struct {
		perm string
		typ  ResourceType
	}{{a.DefaultTopicPerm, TypeTopic}, {a.DefaultGroupPerm, TypeGroup}} {
		if isBlank(d.perm) {
			continue
		}
		perm := strings.TrimSpace(d.perm)
		def = append(def, &Entry{Resource: Resource{Type: d.typ, Pattern: PatternAny}, Actions: v1Actions(perm), Decision: v1Decision(perm)})
	}
	acl := &Acl{Username: a.AccessKey}
	if len(custom) > 0 {
		acl.Policies = append(acl.Policies, &Policy{Type: Custom, Entries: custom})
	}
	if len(def) > 0 {
		acl.Policies = append(acl.Policies, &Policy{Type: Default, Entries: def})
	}
	if len(acl.Policies) == 0 {
		return nil
	}
	return v.s.edit(func(t *tables) (bool, bool, error) {
		t.acls[acl.Username] = acl
		return false, true, nil
	})
}

// v1Actions is AuthMigrator.parseActions.
func v1Actions(perm string) []Action {
	switch perm {
	case "PUB":
		return []Action{ActionPub}
	case "SUB":
		return []Action{ActionSub}
	case "PUB|SUB", "SUB|PUB":
		return []Action{ActionPub, ActionSub}
	}
	return []Action{ActionAll}
}

// v1Decision is AuthMigrator.parseDecision.
func v1Decision(perm string) Decision {
	if isBlank(perm) || perm == "DENY" {
		return Deny
	}
	return Allow
}

// splitNonEmpty is StringUtils.split: empty tokens dropped.
func splitNonEmpty(s, sep string) []string {
	var out []string
	for _, p := range strings.Split(s, sep) {
		if p != "" {
			out = append(out, p)
		}
	}
	return out
}
