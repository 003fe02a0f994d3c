package auth

import (
	"sync"
	"time"

	"github.com/rs/zerolog"
)

// Remote is a Directory over the brokers' users and ACLs, for a
// cluster-mode proxy (Apache's ClusterMetadataService with its user and
// ACL caches): a lookup fetches AUTH_GET_USER / AUTH_GET_ACL's body and
// keeps what was found for RemoteTTL (Apache refreshes after 60 s); what
// was not found is asked again next time, so a new user works at once.
// Lookups block on the fetch: they run on gRPC handler goroutines.
type Remote struct {
	fetch func(code int32, ext map[string]string) ([]byte, error)
	log   zerolog.Logger

	mu    sync.Mutex
	users map[string]remoteEntry[*User]
	acls  map[string]remoteEntry[*Acl]
}

// RemoteTTL is how long a fetched user or ACL is used.
const RemoteTTL = 60 * time.Second

// maxRemote bounds each cache (Apache's userCacheMaxNum default).
const maxRemote = 1000

type remoteEntry[T any] struct {
	v  T
	at time.Time
}

// NewRemote looks users and ACLs up through fetch (the proxy's
// AuthLookup: the body, nil when there is none).
func NewRemote(fetch func(code int32, ext map[string]string) ([]byte, error), log zerolog.Logger) *Remote {
	return &Remote{fetch: fetch, log: log.With().Str("component", "auth").Logger(),
		users: map[string]remoteEntry[*User]{}, acls: map[string]remoteEntry[*Acl]{}}
}

// LookupUser implements Directory.
func (r *Remote) LookupUser(name string) *User {
	return cached(r, r.users, name, func() *User {
		body, err := r.fetch(3004, map[string]string{"username": name})
		if err != nil || len(body) == 0 {
			r.logErr(err, name)
			return nil
		}
		var i UserInfo
		if json.Unmarshal(body, &i) != nil || i.Username == "" {
			return nil
		}
		return userOf(i)
	})
}

// LookupAcl implements Directory.
func (r *Remote) LookupAcl(name string) *Acl {
	return cached(r, r.acls, name, func() *Acl {
		body, err := r.fetch(3009, map[string]string{"subject": SubjectKey(name)})
		if err != nil || len(body) == 0 {
			r.logErr(err, name)
			return nil
		}
		var i AclInfo
		if json.Unmarshal(body, &i) != nil {
			return nil
		}
		a, err := aclOf(i, SubjectKey(name))
		if err != nil {
			return nil
		}
		return a
	})
}

func (r *Remote) logErr(err error, name string) {
	if err != nil {
		r.log.Warn().Err(err).Str("user", name).Msg("auth lookup from the brokers failed")
	}
}

// cached returns m's live entry for name, else load's result (kept when
// found).
func cached[T comparable](r *Remote, m map[string]remoteEntry[T], name string, load func() T) T {
	var zero T
	now := time.Now()
	r.mu.Lock()
	if e, ok := m[name]; ok && now.Sub(e.at) < RemoteTTL {
		r.mu.Unlock()
		return e.v
	}
	r.mu.Unlock()
	v := load()
	if v == zero {
		return v
	}
	r.mu.Lock()
	if len(m) >= maxRemote {
		clear(m) // bounded: names are what clients send
	}
	m[name] = remoteEntry[T]{v: v, at: now}
	r.mu.Unlock()
	return v
}
