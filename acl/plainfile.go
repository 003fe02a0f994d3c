package acl

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"gopkg.in/yaml.v3"
)

// plain_acl.yml, as PlainPermissionManager reads it (keys are Apache's;
// others, such as dataVersion, are ignored here):
//
//	globalWhiteRemoteAddresses:     # peers allowed everything, unsigned
//	  - 10.10.103.*
//	accounts:
//	  - accessKey: RocketMQ         # longer than 6 characters
//	    secretKey: 12345678         # longer than 6; YAML may type it a number
//	    whiteRemoteAddress:         # peers allowed everything with this key, unsigned
//	    admin: false                # admin request codes; all resources if no perms listed
//	    defaultTopicPerm: DENY      # DENY, PUB, SUB, PUB|SUB; absent = DENY
//	    defaultGroupPerm: SUB
//	    topicPerms: [topicA=DENY, topicB=PUB|SUB]
//	    groupPerms: [groupA=DENY]   # stored as the group's retry topic

// maxPlainFile bounds the bytes read from one ACL file.
const maxPlainFile = 4 << 20

// Account is one compiled accounts entry (PlainAccessResource).
type Account struct {
	AccessKey    string
	secret       []byte
	White        Address
	Admin        bool
	DefaultTopic Perm
	DefaultGroup Perm
	// Perms maps a topic, or a group's retry topic, to its permission; nil
	// when the account lists none (an admin then may use everything).
	Perms map[string]Perm

	macs sync.Pool // *signature.Signer keyed by secret, reused (reset) per request
	file string    // the file that defines it (Files.load)
}

// PlainFile is one parsed plain_acl.yml.
type PlainFile struct {
	GlobalWhite []Address
	Accounts    []*Account
	Version     remoting.DataVersion // dataVersion's first element
}

// scalar is a YAML scalar read as its text, whatever YAML types it: Apache
// reads through fastjson, so secretKey: 12345678 is the string "12345678".
type scalar string

func (s *scalar) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: a scalar expected", n.Line)
	}
	if n.Tag == "!!null" {
		*s = ""
		return nil
	}
	*s = scalar(n.Value)
	return nil
}

type plainYAML struct {
	GlobalWhiteRemoteAddresses []scalar      `yaml:"globalWhiteRemoteAddresses"`
	Accounts                   []accountYAML `yaml:"accounts"`
	DataVersion                []struct {
		Counter   scalar `yaml:"counter"`
		Timestamp scalar `yaml:"timestamp"`
	} `yaml:"dataVersion"`
}

type accountYAML struct {
	AccessKey          scalar   `yaml:"accessKey"`
	SecretKey          scalar   `yaml:"secretKey"`
	WhiteRemoteAddress scalar   `yaml:"whiteRemoteAddress"`
	Admin              scalar   `yaml:"admin"`
	DefaultTopicPerm   scalar   `yaml:"defaultTopicPerm"`
	DefaultGroupPerm   scalar   `yaml:"defaultGroupPerm"`
	TopicPerms         []scalar `yaml:"topicPerms"`
	GroupPerms         []scalar `yaml:"groupPerms"`
}

// ErrEmpty is an ACL file without data: Apache skips it ("No data in file").
var ErrEmpty = errors.New("acl: no data in file")

// ParsePlainFile parses one plain_acl.yml. An error names the problem
// but never a secret key (Apache's message for a short key prints it).
func ParsePlainFile(data []byte) (*PlainFile, error) {
	if len(data) > maxPlainFile {
		return nil, fmt.Errorf("acl: file of %d bytes, more than %d", len(data), maxPlainFile)
	}
	var y plainYAML
	if err := yaml.Unmarshal(data, &y); err != nil {
		return nil, fmt.Errorf("acl: parse yaml: %w", err)
	}
	if len(y.GlobalWhiteRemoteAddresses) == 0 && len(y.Accounts) == 0 && len(y.DataVersion) == 0 {
		return nil, ErrEmpty
	}
	f := &PlainFile{}
	if len(y.DataVersion) > 0 {
		// Not numbers: a version restarts (Apache's load would fail the file).
		f.Version.Counter, _ = strconv.ParseInt(string(y.DataVersion[0].Counter), 10, 64)
		f.Version.Timestamp, _ = strconv.ParseInt(string(y.DataVersion[0].Timestamp), 10, 64)
	}
	for _, g := range y.GlobalWhiteRemoteAddresses {
		a, err := ParseAddress(string(g))
		if err != nil {
			return nil, fmt.Errorf("acl: globalWhiteRemoteAddresses: %w", err)
		}
		f.GlobalWhite = append(f.GlobalWhite, a)
	}
	for i, ay := range y.Accounts {
		a, err := ay.compile()
		if err != nil {
			return nil, fmt.Errorf("acl: account %d: %w", i, err)
		}
		f.Accounts = append(f.Accounts, a)
	}
	return f, nil
}

// compile is buildPlainAccessResource.
func (ay accountYAML) compile() (*Account, error) {
	const minLen = 6 // AclConstants.ACCESS_KEY_MIN_LENGTH, SECRET_KEY_MIN_LENGTH
	if len(ay.AccessKey) <= minLen || len(ay.SecretKey) <= minLen {
		return nil, fmt.Errorf("the accessKey=%s and its secretKey cannot be null and length should longer than 6", ay.AccessKey)
	}
	a := &Account{
		AccessKey:    string(ay.AccessKey),
		secret:       []byte(ay.SecretKey),
		DefaultTopic: ParsePerm(string(ay.DefaultTopicPerm)),
		DefaultGroup: ParsePerm(string(ay.DefaultGroupPerm)),
	}
	switch strings.ToLower(strings.TrimSpace(string(ay.Admin))) {
	case "", "false":
	case "true":
		a.Admin = true
	default:
		return nil, fmt.Errorf("accessKey=%s: admin %q is not a boolean", ay.AccessKey, ay.Admin)
	}
	// Groups first, then topics, as buildPlainAccessResource: a topic that
	// is also a retry topic name keeps the topic entry.
	if err := a.addPerms(ay.GroupPerms, false); err != nil {
		return nil, err
	}
	if err := a.addPerms(ay.TopicPerms, true); err != nil {
		return nil, err
	}
	w, err := ParseAddress(string(ay.WhiteRemoteAddress))
	if err != nil {
		return nil, fmt.Errorf("accessKey=%s whiteRemoteAddress: %w", ay.AccessKey, err)
	}
	a.White = w
	return a, nil
}

// addPerms is Permission.parseResourcePerms: an unknown permission is
// DENY (checkResourcePerms, stricter, runs only for the admin codes).
func (a *Account) addPerms(list []scalar, topic bool) error {
	kind := "group"
	if topic {
		kind = "topic"
	}
	for _, r := range list {
		items := split(string(r), "=")
		if len(items) != 2 {
			return fmt.Errorf("parse resource permission failed for %s:%s", kind, r)
		}
		name := strings.TrimSpace(items[0])
		if !topic {
			name = message.RetryGroupPrefix + name
		}
		if a.Perms == nil {
			a.Perms = make(map[string]Perm)
		}
		a.Perms[name] = ParsePerm(items[1])
	}
	return nil
}
