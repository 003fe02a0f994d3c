package broker

import (
	"strings"
	"sync"

	"github.com/rocketgo/rocketgo/filter"
)

// maxFilters bounds the compiled-expression cache; past it the cache restarts.
const maxFilters = 4096

// Filters caches compiled SQL92 expressions by text, so each subscription's
// expression is parsed once, not per pull.
type Filters struct {
	mu sync.RWMutex
	m  map[string]compiledFilter
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
