package tables

import (
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/rocketgo/rocketgo/filter"
	"github.com/rocketgo/rocketgo/message"
)

// ErrExpressionTooLong: a subscription expression longer than
// filterExpressionMaxLength; the pull is answered as Apache answers an
// expression it cannot parse (SUBSCRIPTION_PARSE_FAILED).
var ErrExpressionTooLong = errors.New("broker: subscription expression too long")

// Cost of a cached entry beyond its text, for the byte bound: a compiled
// SQL92 tree is a few times its source; a TAG set costs a string header, a
// hash-set entry and a slice slot per tag.
const (
	DefaultFilterCacheMaxBytes       = 64 << 20
	DefaultFilterExpressionMaxLength = 64 << 10

	sqlCostFactor = 4
	tagCost       = 64
	entryCost     = 128
)

// Filters caches parsed subscription expressions by text, so each is parsed
// once, not per pull: compiled SQL92, and TAG expressions that pulls carry
// (the Go client sends its subscription with every pull). The cache is
// bounded in bytes (filterCacheMaxBytes, counted from the expression and
// what its parse holds); past the bound entries are evicted at random (map
// order) until the new one fits. An expression longer than
// filterExpressionMaxLength is refused before it is parsed. A hit takes a
// read lock and a map lookup, nothing more.
type Filters struct {
	maxBytes int64 // 0: DefaultConfig's
	maxLen   int   // 0: DefaultConfig's

	mu       sync.RWMutex
	m        map[string]compiledFilter
	tags     map[string]*Subscription
	sqlBytes int64 // cost of m, under mu
	tagBytes int64 // cost of tags, under mu
}

type compiledFilter struct {
	expr *filter.Expr
	err  error
	cost int64
}

// SetLimits applies filterCacheMaxBytes and filterExpressionMaxLength; the
// byte budget is shared by the two caches, half each. Call before use.
func (f *Filters) SetLimits(maxBytes int64, maxLen int) {
	f.maxBytes, f.maxLen = maxBytes, maxLen
}

func (f *Filters) limits() (half int64, maxLen int) {
	maxBytes, maxLen := f.maxBytes, f.maxLen
	if maxBytes <= 0 {
		maxBytes = DefaultFilterCacheMaxBytes
	}
	if maxLen <= 0 {
		maxLen = DefaultFilterExpressionMaxLength
	}
	return max(maxBytes/2, 1), maxLen
}

func (f *Filters) tooLong(src string, maxLen int) error {
	if len(src) > maxLen {
		return fmt.Errorf("%w: %d bytes, filterExpressionMaxLength %d", ErrExpressionTooLong, len(src), maxLen)
	}
	return nil
}

// Compile returns the compiled expression (or its parse error) for src.
func (f *Filters) Compile(src string) (*filter.Expr, error) {
	f.mu.RLock()
	c, ok := f.m[src]
	f.mu.RUnlock()
	if ok {
		return c.expr, c.err
	}
	half, maxLen := f.limits()
	if err := f.tooLong(src, maxLen); err != nil {
		return nil, err
	}
	src = strings.Clone(src) // kept: not a view into a request (remoting/pool.go)
	e, err := filter.Compile(src)
	c = compiledFilter{expr: e, err: err, cost: entryCost + int64(len(src))*(1+sqlCostFactor)}
	f.mu.Lock()
	if f.m == nil {
		f.m = make(map[string]compiledFilter)
	}
	if old, ok := f.m[src]; ok { // compiled meanwhile by another pull
		f.mu.Unlock()
		return old.expr, old.err
	}
	for k, v := range f.m {
		if f.sqlBytes+c.cost <= half {
			break
		}
		delete(f.m, k)
		f.sqlBytes -= v.cost
	}
	if c.cost <= half {
		f.m[src] = c
		f.sqlBytes += c.cost
	}
	f.mu.Unlock()
	return e, err
}

// Tags returns the parsed TAG expression expr, for matching only: the
// result has no Topic and no SubVersion and must not be modified.
func (f *Filters) Tags(expr string) (*Subscription, error) {
	f.mu.RLock()
	s, ok := f.tags[expr]
	f.mu.RUnlock()
	if ok {
		return s, nil
	}
	half, maxLen := f.limits()
	if err := f.tooLong(expr, maxLen); err != nil {
		return nil, err
	}
	expr = strings.Clone(expr) // kept: not a view into a request (remoting/pool.go)
	s = NewTagSubscription("", expr, 0)
	cost := tagsCost(s)
	f.mu.Lock()
	if f.tags == nil {
		f.tags = make(map[string]*Subscription)
	}
	if old, ok := f.tags[expr]; ok {
		f.mu.Unlock()
		return old, nil
	}
	for k, v := range f.tags {
		if f.tagBytes+cost <= half {
			break
		}
		delete(f.tags, k)
		f.tagBytes -= tagsCost(v)
	}
	if cost <= half {
		f.tags[expr] = s
		f.tagBytes += cost
	}
	f.mu.Unlock()
	return s, nil
}

func tagsCost(s *Subscription) int64 {
	return entryCost + int64(len(s.SubString)) + int64(len(s.Tags))*tagCost
}

// CacheBytes reports the cost counted against filterCacheMaxBytes.
func (f *Filters) CacheBytes() int64 {
	f.mu.RLock()
	defer f.mu.RUnlock()
	return f.sqlBytes + f.tagBytes
}

// IsTagType is ExpressionType.isTagType (case aside: clients send "TAG").
func IsTagType(t string) bool { return t == "" || strings.EqualFold(t, "TAG") }

// RecordMatcher matches records against a tag subscription or a compiled
// SQL92 expression; nil matches every record.
func RecordMatcher(sub *Subscription, expr *filter.Expr) func(int64, []byte) bool {
	if expr != nil {
		return func(_ int64, record []byte) bool {
			v, _, err := message.DecodeRecordView(record)
			return err == nil && expr.Match(func(name string) (string, bool) {
				b := message.PropertyBytes(v.Properties, name)
				return string(b), len(b) > 0
			})
		}
	}
	if sub == nil || sub.All() {
		return nil
	}
	return func(code int64, record []byte) bool {
		if !sub.MatchTagsCode(code) {
			return false
		}
		v, _, err := message.DecodeRecordView(record)
		return err == nil && sub.MatchTag(message.PropertyBytes(v.Properties, message.PropTags))
	}
}
