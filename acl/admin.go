package acl

import (
	"errors"
	"fmt"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/rocketgo/rocketgo/remoting"
)

// The ACL 1.0 admin codes' service (PlainPermissionManager's
// updateAccessConfig, deleteAccessConfig, updateGlobalWhiteAddrsConfig,
// getAclConfigDataVersion). Each edit writes a file and loads the rules
// again before it returns: the change is in force when the answer leaves
// (Apache applies accounts at once and white addresses at the next watch).
// They write files: callers run them off the event loop.

// AccountUpdate is UPDATE_AND_CREATE_ACL_CONFIG's header
// (CreateAccessConfigRequestHeader). A Has flag is false when the header
// did not carry the field (Apache's null: the account keeps its value).
type AccountUpdate struct {
	AccessKey, SecretKey               string
	WhiteRemoteAddress                 string
	HasWhite                           bool
	Admin                              bool
	DefaultTopicPerm, DefaultGroupPerm string
	TopicPerms, GroupPerms             []string
	HasTopicPerms, HasGroupPerms       bool
}

// ErrNoAccount is DeleteAccount of a key no file defines.
var ErrNoAccount = errors.New("acl: no such accessKey")

// UpdateAccount creates or changes an account: in the file that defines
// its key, else in the default file. An error's text is Apache's remark.
func (f *Files) UpdateAccount(u AccountUpdate) error {
	if len(u.AccessKey) <= 6 || len(u.SecretKey) <= 6 {
		//lint:ignore ST1005 Apache's remark, sent to the requester, never logged
		return fmt.Errorf("The accessKey=%s and secretKey=%s cannot be null and length should longer than 6", u.AccessKey, u.SecretKey)
	}
	for _, list := range [][]string{u.TopicPerms, u.GroupPerms} {
		if err := checkResourcePerms(list); err != nil {
			return err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	path := f.DefaultFile()
	if a := f.rules.Load().accounts[u.AccessKey]; a != nil {
		path = a.file
	}
	err := editFile(path, func(m *yaml.Node) error {
		accts := key(m, "accounts")
		if accts == nil || accts.Kind != yaml.SequenceNode {
			accts = &yaml.Node{Kind: yaml.SequenceNode}
			setKey(m, "accounts", accts)
		}
		acct := &yaml.Node{Kind: yaml.MappingNode}
		for i, n := range accts.Content {
			if k := key(n, "accessKey"); k != nil && k.Value == u.AccessKey {
				// Apache removes the account and adds it back at the end.
				acct = n
				accts.Content = append(accts.Content[:i:i], accts.Content[i+1:]...)
				break
			}
		}
		apply(u, acct)
		accts.Content = append(accts.Content, acct)
		return nil
	})
	if err != nil {
		return err
	}
	f.reloadLocked()
	return nil
}

// apply is createAclAccessConfigMap: what the header carries replaces the
// account's value.
func apply(u AccountUpdate, n *yaml.Node) {
	setKey(n, "accessKey", scalarNode(u.AccessKey))
	if u.SecretKey != "" {
		setKey(n, "secretKey", scalarNode(u.SecretKey))
	}
	if u.HasWhite {
		setKey(n, "whiteRemoteAddress", scalarNode(u.WhiteRemoteAddress))
	}
	setKey(n, "admin", &yaml.Node{Kind: yaml.ScalarNode, Tag: "!!bool", Value: fmt.Sprint(u.Admin)})
	if u.DefaultTopicPerm != "" {
		setKey(n, "defaultTopicPerm", scalarNode(u.DefaultTopicPerm))
	}
	if u.DefaultGroupPerm != "" {
		setKey(n, "defaultGroupPerm", scalarNode(u.DefaultGroupPerm))
	}
	if u.HasTopicPerms {
		setKey(n, "topicPerms", seqNode(u.TopicPerms))
	}
	if u.HasGroupPerms {
		setKey(n, "groupPerms", seqNode(u.GroupPerms))
	}
}

// checkResourcePerms is Permission.checkResourcePerms: "name=PERM" with a
// permission Apache knows.
func checkResourcePerms(list []string) error {
	for _, r := range list {
		items := split(r, "=")
		if len(items) != 2 {
			//lint:ignore ST1005 Apache's remark
			return fmt.Errorf("Parse Resource format error for %s.\nThe expected resource format is 'Res=Perm'. For example: topicA=SUB", r)
		}
		p := strings.TrimSpace(items[1])
		if p != "DENY" && ParsePerm(p) == Deny {
			//lint:ignore ST1005 Apache's remark
			return fmt.Errorf("Parse resource permission error for %s.\nThe expected permissions are 'SUB' or 'PUB' or 'SUB|PUB' or 'PUB|SUB'.", r)
		}
	}
	return nil
}

// DeleteAccount removes an account from the file that defines it;
// ErrNoAccount when none does.
func (f *Files) DeleteAccount(ak string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.rules.Load().accounts[ak]
	if ak == "" || a == nil {
		return ErrNoAccount
	}
	found := false
	err := editFile(a.file, func(m *yaml.Node) error {
		accts := key(m, "accounts")
		if accts == nil || accts.Kind != yaml.SequenceNode {
			return ErrNoAccount
		}
		for i, n := range accts.Content {
			if k := key(n, "accessKey"); k != nil && k.Value == ak {
				accts.Content = append(accts.Content[:i:i], accts.Content[i+1:]...)
				found = true
				return nil
			}
		}
		return ErrNoAccount
	})
	if err != nil {
		return err
	}
	if !found {
		return ErrNoAccount
	}
	f.reloadLocked()
	return nil
}

// ErrNotACLFile refuses UPDATE_GLOBAL_WHITE_ADDRS_CONFIG's aclFileFullPath.
var ErrNotACLFile = errors.New("acl: not an existing .yml/.yaml file under rocketmqHome")

// UpdateGlobalWhite replaces globalWhiteRemoteAddresses in file (the
// default file when empty).
func (f *Files) UpdateGlobalWhite(addrs []string, file string) error {
	if file == "" {
		file = f.DefaultFile()
	}
	if !isACLFile(f.home, file) {
		return ErrNotACLFile
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	err := editFile(file, func(m *yaml.Node) error {
		setKey(m, "globalWhiteRemoteAddresses", seqNode(addrs))
		return nil
	})
	if err != nil {
		return err
	}
	f.reloadLocked()
	return nil
}

// Version is the default file's dataVersion (GET_BROKER_CLUSTER_ACL_INFO).
func (f *Files) Version() remoting.DataVersion { return *f.version.Load() }

// Versions is every loaded file's dataVersion by path (4.9.8's
// allAclFileVersion).
func (f *Files) Versions() map[string]remoting.DataVersion { return *f.versions.Load() }
