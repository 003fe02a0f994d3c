package stats

import (
	"strings"
	"sync"
)

// LiteLag is Apache 5.5's LiteConsumerLagCalculator.topicGroupLagTimeMap,
// the source of a lite group's lag latency: per lite group and parent
// topic, the lite topics (LMQs) whose last pop filled its batch, each with
// the store time of the first message that pop left behind, keeping the
// topK oldest. A lite pop that did not fill its batch, or left nothing
// behind, takes its lite topic out (it is caught up). Fed by the lite pops
// when liteLagLatencyCollectEnable is on, read by the metrics at scrape.
//
// Bounds: at most MaxKeys (group, parent) pairs, at most topK lite topics
// each; every operation is linear in topK (Apache's heap removes by a
// linear scan too) under one mutex, which the lite pops, serialised
// already, and the scrape share.
type LiteLag struct {
	mu     sync.Mutex
	byTop  map[string]map[string]*lagTimes // parent -> group -> its lite topics
	npairs int
}

// lagTimes is one (group, parent)'s lite topics, unordered, at most topK.
type lagTimes struct {
	lmqs []string
	ts   []int64
}

// Update notes that group's pop of lmq, a lite topic of parent, left
// messages behind, the first stored at ts. Past topK lite topics the one
// left behind the latest is dropped (Apache keeps the oldest).
func (l *LiteLag) Update(group, parent, lmq string, ts int64, topK int) {
	l.mu.Lock()
	defer l.mu.Unlock()
	groups := l.byTop[parent]
	t := groups[group]
	if t == nil {
		if l.npairs >= MaxKeys || topK <= 0 {
			return
		}
		if l.byTop == nil {
			l.byTop = make(map[string]map[string]*lagTimes)
		}
		if groups == nil {
			groups = make(map[string]*lagTimes, 1)
			l.byTop[strings.Clone(parent)] = groups
		}
		t = &lagTimes{}
		groups[strings.Clone(group)] = t
		l.npairs++
	}
	if i := t.index(lmq); i >= 0 {
		t.ts[i] = ts
	} else {
		t.lmqs = append(t.lmqs, strings.Clone(lmq))
		t.ts = append(t.ts, ts)
	}
	for len(t.lmqs) > max(topK, 0) {
		latest := 0
		for i, v := range t.ts {
			if v > t.ts[latest] {
				latest = i
			}
		}
		t.remove(latest)
	}
	if len(t.lmqs) == 0 {
		l.dropLocked(parent, group)
	}
}

// Remove takes lmq out of group's lite topics of parent: its last pop
// caught up.
func (l *LiteLag) Remove(group, parent, lmq string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := l.byTop[parent][group]
	if t == nil {
		return
	}
	if i := t.index(lmq); i >= 0 {
		t.remove(i)
	}
	if len(t.lmqs) == 0 {
		l.dropLocked(parent, group)
	}
}

// Forget takes lmq, a lite topic of parent that was deleted, out of every
// group's lite topics. Apache keeps a deleted lite topic's entry, whose
// latency then grows for ever.
func (l *LiteLag) Forget(parent, lmq string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for group, t := range l.byTop[parent] {
		if i := t.index(lmq); i >= 0 {
			t.remove(i)
		}
		if len(t.lmqs) == 0 {
			l.dropLocked(parent, group)
		}
	}
}

// Range calls fn with each (group, parent)'s oldest store time until fn
// returns false. fn runs under the lock: it must not call l.
func (l *LiteLag) Range(fn func(group, parent string, oldest int64) bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	for parent, groups := range l.byTop {
		for group, t := range groups {
			oldest := t.ts[0]
			for _, v := range t.ts[1:] {
				oldest = min(oldest, v)
			}
			if !fn(group, parent, oldest) {
				return
			}
		}
	}
}

func (l *LiteLag) dropLocked(parent, group string) {
	groups := l.byTop[parent]
	if _, ok := groups[group]; !ok {
		return
	}
	delete(groups, group)
	l.npairs--
	if len(groups) == 0 {
		delete(l.byTop, parent)
	}
}

func (t *lagTimes) index(lmq string) int {
	for i, q := range t.lmqs {
		if q == lmq {
			return i
		}
	}
	return -1
}

// remove drops entry i, moving the last into its place.
func (t *lagTimes) remove(i int) {
	last := len(t.lmqs) - 1
	t.lmqs[i], t.ts[i] = t.lmqs[last], t.ts[last]
	t.lmqs[last] = ""
	t.lmqs, t.ts = t.lmqs[:last], t.ts[:last]
}
