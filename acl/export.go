package acl

import (
	"errors"
	"fmt"

	"gopkg.in/yaml.v3"
)

// PlainAccount is one plain_acl.yml account as written (PlainAccessConfig):
// what ACL 2.0's migrateAuthFromV1Enabled imports.
type PlainAccount struct {
	AccessKey, SecretKey               string
	Admin                              bool
	DefaultTopicPerm, DefaultGroupPerm string
	TopicPerms, GroupPerms             []string
}

// PlainAccounts reads the accounts of home's ACL files (the files Files
// loads, in its order; a key defined twice keeps its first account).
func PlainAccounts(home string) ([]PlainAccount, error) {
	f := &Files{home: home}
	var out []PlainAccount
	seen := map[string]bool{}
	for _, p := range f.paths() {
		data, err := readBounded(p)
		if err != nil {
			return nil, err
		}
		if _, err := ParsePlainFile(data); errors.Is(err, ErrEmpty) {
			continue
		} else if err != nil {
			return nil, fmt.Errorf("load %s: %w", p, err)
		}
		var y plainYAML
		if err := yaml.Unmarshal(data, &y); err != nil {
			return nil, fmt.Errorf("acl: parse yaml: %w", err)
		}
		for _, a := range y.Accounts {
			if seen[string(a.AccessKey)] {
				continue
			}
			seen[string(a.AccessKey)] = true
			out = append(out, PlainAccount{
				AccessKey: string(a.AccessKey), SecretKey: string(a.SecretKey),
				Admin:            string(a.Admin) == "true",
				DefaultTopicPerm: string(a.DefaultTopicPerm), DefaultGroupPerm: string(a.DefaultGroupPerm),
				TopicPerms: strs(a.TopicPerms), GroupPerms: strs(a.GroupPerms),
			})
		}
	}
	return out, nil
}

func strs(in []scalar) []string {
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = string(s)
	}
	return out
}
