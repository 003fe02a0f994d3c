package auth

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/rocketgo/rocketgo/config"
)

// The files in authConfigPath (Apache: the RocksDB directories users/
// and acls/ there).
const (
	UsersFile = "users.json"
	AclsFile  = "acls.json"
)

// maxFile bounds a file read at start.
const maxFile = 64 << 20

// tables is the users and ACLs in force; never changed once published.
type tables struct {
	users map[string]*User // by username
	acls  map[string]*Acl  // by username (the subject "User:name")
}

// Store holds the users and ACLs of authConfigPath: read by requests
// through one atomic pointer, changed by edits one at a time, each
// written to its file before it is published.
type Store struct {
	dir string
	mu  sync.Mutex // serialises edits
	t   atomic.Pointer[tables]
}

// OpenStore loads dir's users.json and acls.json (absent: empty). A file
// that does not parse is an error: the broker does not start on half a
// configuration.
func OpenStore(dir string) (*Store, error) {
	s := &Store{dir: dir}
	t := &tables{users: map[string]*User{}, acls: map[string]*Acl{}}
	if data, err := readFile(filepath.Join(dir, UsersFile)); err != nil {
		return nil, err
	} else if data != nil {
		users, err := ParseUsers(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, UsersFile), err)
		}
		for _, u := range users {
			t.users[u.Username] = u
		}
	}
	if data, err := readFile(filepath.Join(dir, AclsFile)); err != nil {
		return nil, err
	} else if data != nil {
		acls, err := ParseAcls(data)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", filepath.Join(dir, AclsFile), err)
		}
		for _, a := range acls {
			t.acls[a.Username] = a
		}
	}
	s.t.Store(t)
	return s, nil
}

func readFile(p string) ([]byte, error) {
	f, err := os.Open(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("open auth file: %w", err)
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxFile+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if len(data) > maxFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, maxFile)
	}
	return data, nil
}

// ParseUsers reads users.json: a JSON array of UserInfo.
func ParseUsers(data []byte) ([]*User, error) {
	var infos []UserInfo
	if err := strictJSON(data, &infos); err != nil {
		return nil, fmt.Errorf("parse users: %w", err)
	}
	out := make([]*User, 0, len(infos))
	for _, i := range infos {
		if isBlank(i.Username) || isBlank(i.Password) {
			return nil, errors.New("parse users: a user without username or password")
		}
		u := userOf(i)
		if u.Type == 0 {
			u.Type = Normal
		}
		if u.Status == 0 {
			u.Status = Enabled
		}
		out = append(out, u)
	}
	return out, nil
}

// ParseAcls reads acls.json: a JSON array of AclInfo, each valid as an
// ACL edit must be.
func ParseAcls(data []byte) ([]*Acl, error) {
	var infos []AclInfo
	if err := strictJSON(data, &infos); err != nil {
		return nil, fmt.Errorf("parse acls: %w", err)
	}
	out := make([]*Acl, 0, len(infos))
	for _, i := range infos {
		a, err := aclOf(i, "")
		if err != nil {
			return nil, fmt.Errorf("parse acls: %s: %w", i.Subject, err)
		}
		out = append(out, a)
	}
	return out, nil
}

func strictJSON(data []byte, v any) error {
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		return err
	}
	if d.More() {
		return errors.New("data after the JSON value")
	}
	return nil
}

// user is the user named name, nil if none.
func (s *Store) user(name string) *User { return s.t.Load().users[name] }

// Directory is where users and ACLs are looked up: the Store, or (in a
// cluster-mode proxy) the brokers' through a Remote cache.
type Directory interface {
	LookupUser(name string) *User // nil if none
	LookupAcl(name string) *Acl   // the user's ACL, nil if none
}

// LookupUser implements Directory.
func (s *Store) LookupUser(name string) *User { return s.user(name) }

// LookupAcl implements Directory.
func (s *Store) LookupAcl(name string) *Acl { return s.t.Load().acls[name] }

// edit runs fn on a copy of the tables under the edit lock; what fn
// changed is written (users, acls say which) and then published.
func (s *Store) edit(fn func(t *tables) (users, acls bool, err error)) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	cur := s.t.Load()
	next := &tables{users: cloneMap(cur.users), acls: cloneMap(cur.acls)}
	wu, wa, err := fn(next)
	if err != nil {
		return err
	}
	if wu {
		if err := s.write(UsersFile, usersJSON(next.users)); err != nil {
			return err
		}
	}
	if wa {
		if err := s.write(AclsFile, aclsJSON(next.acls)); err != nil {
			return err
		}
	}
	s.t.Store(next)
	return nil
}

func (s *Store) write(name string, v any) error {
	data, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("encode %s: %w", name, err)
	}
	if err := config.WriteFile(filepath.Join(s.dir, name), append(data, '\n')); err != nil {
		return fmt.Errorf("write auth file: %w", err)
	}
	return nil
}

func cloneMap[V any](m map[string]V) map[string]V {
	c := make(map[string]V, len(m)+1)
	for k, v := range m {
		c[k] = v
	}
	return c
}

// usersJSON and aclsJSON list in RocksDB's key order (bytes), the order
// Apache's list codes answer in.
func usersJSON(m map[string]*User) []UserInfo {
	out := make([]UserInfo, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, m[k].Info())
	}
	return out
}

func aclsJSON(m map[string]*Acl) []AclInfo {
	out := make([]AclInfo, 0, len(m))
	for _, k := range sortedKeys(m) {
		out = append(out, m[k].Info())
	}
	return out
}

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, strings.Compare)
	return keys
}
