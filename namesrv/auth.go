package namesrv

// Authentication on the name server, beyond Apache (whose name server
// takes every request from anyone): with authenticationEnabled, requests
// that change the tables must be signed as the clients sign for ACL 2.0
// (AccessKey and Signature extFields, package auth/signature), by a user
// of the name server's own table; reads stay open, so clients without
// credentials still find their routes.
//
// Who may write: a broker's codes (registration, unregistration,
// heartbeat, QUERY_DATA_VERSION, which refreshes liveness) need any
// enabled user, Normal or Super: a broker signs with its
// innerClientAuthenticationCredentials. Every other write (KV config,
// topics, write permissions, config) needs a Super user. The users are
// read at start only: initAuthenticationUser (Super) and, with
// authConfigPath, its users.json in the broker's format.

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/rocketgo/rocketgo/auth/signature"
	"github.com/rocketgo/rocketgo/remoting"
)

// usersFile is the users file in authConfigPath (the broker's name).
const usersFile = "users.json"

// maxUsersFile bounds the users file read at start.
const maxUsersFile = 64 << 20

// user is an account of the name server's table.
type user struct {
	super    bool
	disabled bool
	key      *signature.Key
}

func (u *user) Disabled() bool { return u.disabled }

func (u *user) Verify(req *remoting.Command, sig string) bool { return u.key.Verify(req, sig) }

// users is the table, never changed once loaded.
type users map[string]*user

func (us users) lookup(name string) (signature.Account, bool) {
	u, ok := us[name]
	return u, ok
}

// check is "" when req is signed by a user allowed to write (super: only
// a Super user), else the refusal's remark: Apache's authentication
// messages, or, for a Normal user's admin write, the name server's own.
func (us users) check(req *remoting.Command, super bool) string {
	name, refusal := signature.Authenticate(req, us.lookup)
	if refusal != "" {
		return refusal
	}
	if super && !us[name].super {
		return "User:" + name + " has no permission to change the name server: only a Super user may."
	}
	return ""
}

// loadUsers builds the table from cfg: authConfigPath's users.json, then
// initAuthenticationUser as a Super user (it replaces a user of its name).
func loadUsers(cfg Config) (users, error) {
	us := users{}
	if cfg.AuthConfigPath != "" {
		p := filepath.Join(cfg.AuthConfigPath, usersFile)
		data, err := readBounded(p)
		switch {
		case errors.Is(err, os.ErrNotExist):
		case err != nil:
			return nil, fmt.Errorf("namesrv: users: %w", err)
		default:
			if err := parseUsers(data, us); err != nil {
				return nil, fmt.Errorf("namesrv: %s: %w", p, err)
			}
		}
	}
	if s := strings.TrimSpace(string(cfg.InitAuthenticationUser)); s != "" {
		var u struct{ Username, Password string }
		if err := json.Unmarshal([]byte(s), &u); err != nil {
			return nil, fmt.Errorf("namesrv: initAuthenticationUser is not a JSON user: %w", err)
		}
		if strings.TrimSpace(u.Username) == "" || strings.TrimSpace(u.Password) == "" {
			return nil, errors.New("namesrv: initAuthenticationUser needs a username and a password")
		}
		us[u.Username] = &user{super: true, key: signature.NewKey(u.Password)}
	}
	if len(us) == 0 {
		return nil, errors.New("namesrv: authenticationEnabled without users: set initAuthenticationUser or authConfigPath")
	}
	return us, nil
}

func readBounded(p string) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, maxUsersFile+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxUsersFile {
		return nil, fmt.Errorf("%s is larger than %d bytes", p, maxUsersFile)
	}
	return data, nil
}

// parseUsers reads users.json as the broker writes it: a JSON array of
// UserInfo; userType Super or Normal (default Normal), userStatus enable
// or disable (default enable).
func parseUsers(data []byte, into users) error {
	var infos []struct {
		Username   string `json:"username"`
		Password   string `json:"password"`
		UserType   string `json:"userType"`
		UserStatus string `json:"userStatus"`
	}
	d := json.NewDecoder(bytes.NewReader(data))
	d.DisallowUnknownFields()
	if err := d.Decode(&infos); err != nil {
		return fmt.Errorf("parse users: %w", err)
	}
	for _, i := range infos {
		if strings.TrimSpace(i.Username) == "" || strings.TrimSpace(i.Password) == "" {
			return errors.New("parse users: a user without username or password")
		}
		u := &user{key: signature.NewKey(i.Password)}
		switch {
		case strings.EqualFold(i.UserType, "Super"):
			u.super = true
		case i.UserType == "" || strings.EqualFold(i.UserType, "Normal"):
		default:
			return fmt.Errorf("parse users: %s: userType %q", i.Username, i.UserType)
		}
		switch {
		case strings.EqualFold(i.UserStatus, "disable"):
			u.disabled = true
		case i.UserStatus == "" || strings.EqualFold(i.UserStatus, "enable"):
		default:
			return fmt.Errorf("parse users: %s: userStatus %q", i.Username, i.UserStatus)
		}
		into[i.Username] = u
	}
	return nil
}

// The access a request code needs with authentication on.
type access uint8

const (
	open       access = iota // reads: anyone
	brokerUser               // a broker's own codes: any enabled user
	superUser                // every other write: a Super user
)

// signed serves fn only to requests signed with the access a; with
// authentication off it is fn. A refusal is NO_PERMISSION with the
// remark, as Apache's authentication pipeline answers.
func (h *handlers) signed(a access, fn HandlerFunc) HandlerFunc {
	if h.users == nil || a == open {
		return fn
	}
	return func(c *remoting.Conn, req *remoting.Command) *remoting.Command {
		if r := h.users.check(req, a == superUser); r != "" {
			remote := ""
			if c != nil {
				remote = c.Remote
			}
			ak, _ := req.Lookup(signature.FieldAccessKey)
			h.sampled.Warn().Str("remote", remote).Int32("code", req.Code).Str("user", short(ak)).
				Str("reason", short(r)).Msg("name server write refused by authentication")
			return remoting.NewResponse(req, remoting.NoPermission, r)
		}
		return fn(c, req)
	}
}

// short bounds a client's string in a log line.
func short(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
