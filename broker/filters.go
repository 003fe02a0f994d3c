package broker

import (
	"strings"
	"sync"

	"github.com/rocketgo/rocketgo/filter"
)

// maxFilters bounds each expression cache; past it the cache restarts.
const maxFilters = 4096

// Filters caches parsed subscription expressions by text, so each is parsed
// once, not per pull: compiled SQL92, and TAG expressions that pulls carry
// (the Go client sends its subscription with every pull).
type Filters struct {
	mu   sync.RWMutex
	m    map[string]compiledFilter
	tags map[string]*Subscription
}

type compiledFilter struct {
	expr *filter.Expr
	err  error
}

// Compile returns the compiled expression (or its parse error) for src.
func (f *Filters) Compile(src string) (*filter.Expr, error) {
	f.mu.RLock()
	c, ok := f.m[src]
	f.mu.RUnlock()
	if ok {
		return c.expr, c.err
	}
	src = strings.Clone(src) // kept: not a view into a request (remoting/pool.go)
	e, err := filter.Compile(src)
	f.mu.Lock()
	if f.m == nil || len(f.m) >= maxFilters {
		f.m = make(map[string]compiledFilter)
	}
	f.m[src] = compiledFilter{e, err}
	f.mu.Unlock()
	return e, err
}

// Tags returns the parsed TAG expression expr, for matching only: the
// result has no Topic and no SubVersion and must not be modified.
func (f *Filters) Tags(expr string) *Subscription {
	f.mu.RLock()
	s, ok := f.tags[expr]
	f.mu.RUnlock()
	if ok {
		return s
	}
	expr = strings.Clone(expr) // kept: not a view into a request (remoting/pool.go)
	s = NewTagSubscription("", expr, 0)
	f.mu.Lock()
	if f.tags == nil || len(f.tags) >= maxFilters {
		f.tags = make(map[string]*Subscription)
	}
	f.tags[expr] = s
	f.mu.Unlock()
	return s
}
