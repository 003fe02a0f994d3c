package stats

// VIEW_BROKER_STATS_DATA's figures (mqadmin statsAll, the dashboard's
// charts): Apache's StatsItem windows over the flow counters of flows.go.
// Every 10 s the sampler records each key's (time, calls, count) in its
// minute window (7 samples kept), every 10 min in its hour window (7),
// every hour in its day window (25), all three at the sampler's first
// tick, as StatsItemSet's schedules (initial delay 0). A window's first
// sample is preceded by a zero one a period earlier, so what was counted
// before it shows. A window's figures are the difference between its
// newest and oldest samples: sum, tps (sum per second over their
// interval) and avgpt (sum per call).
//
// Keys, as BrokerStatsManager's: TOPIC_PUT_NUMS and TOPIC_PUT_SIZE by
// topic, GROUP_GET_NUMS and GROUP_GET_SIZE by topic@group,
// BROKER_PUT_NUMS and BROKER_GET_NUMS by cluster name. An item exists once
// its key was counted (its figures zero until sampled; the broker-wide
// ones only once sampled): before, Apache's answer, not exist.

import (
	"strings"
	"sync"
	"time"
)

// The stats names (BrokerStatsManager).
const (
	StatsTopicPutNums  = "TOPIC_PUT_NUMS"
	StatsTopicPutSize  = "TOPIC_PUT_SIZE"
	StatsGroupGetNums  = "GROUP_GET_NUMS"
	StatsGroupGetSize  = "GROUP_GET_SIZE"
	StatsBrokerPutNums = "BROKER_PUT_NUMS"
	StatsBrokerGetNums = "BROKER_GET_NUMS"
)

const statsSecondTick = 10 * time.Second

// StatsSnapshot is one window's figures (BrokerStatsItem).
type StatsSnapshot struct {
	Sum   int64
	Tps   float64
	Avgpt float64
}

// StatsData is BrokerStatsData: an item's minute, hour and day figures.
type StatsData struct{ Minute, Hour, Day StatsSnapshot }

type callSnapshot struct{ at, times, value int64 }

// callWindow is one of a StatsItem's snapshot lists.
type callWindow struct {
	list   []callSnapshot
	keep   int
	period int64 // ms, the zero sample's distance before the first
}

func (w *callWindow) sample(now, times, value int64) {
	if len(w.list) == 0 {
		w.list = append(w.list, callSnapshot{at: now - w.period})
	}
	w.list = append(w.list, callSnapshot{now, times, value})
	if len(w.list) > w.keep {
		w.list = append(w.list[:0], w.list[1:]...)
	}
}

func (w *callWindow) figures() StatsSnapshot {
	if len(w.list) == 0 {
		return StatsSnapshot{}
	}
	first, last := w.list[0], w.list[len(w.list)-1]
	s := StatsSnapshot{Sum: last.value - first.value}
	s.Tps = float64(s.Sum) * 1000 / float64(last.at-first.at)
	if times := last.times - first.times; times > 0 {
		s.Avgpt = float64(s.Sum) / float64(times)
	}
	return s
}

// statItem is one key's three windows.
type statItem struct {
	mu                sync.Mutex
	minute, hour, day callWindow
}

func newStatItem() *statItem {
	return &statItem{
		minute: callWindow{keep: 7, period: 10_000},
		hour:   callWindow{keep: 7, period: 600_000},
		day:    callWindow{keep: 25, period: 3_600_000},
	}
}

// statItems are the items by name and key; the sampler alone adds them,
// one per flow key (bounded as the flows are) and per name.
type statItems struct {
	mu    sync.RWMutex
	items map[[2]string]*statItem
}

// StatsData returns the figures of the item name/key; false when there is none.
func (s *Stats) StatsData(name, key string) (StatsData, bool) {
	s.items.mu.RLock()
	it := s.items.items[[2]string{name, key}]
	s.items.mu.RUnlock()
	if it == nil {
		// Counted but not sampled yet: Apache's item exists from its first
		// count, its windows empty.
		return StatsData{}, s.counted(name, key)
	}
	it.mu.Lock()
	defer it.mu.Unlock()
	return StatsData{Minute: it.minute.figures(), Hour: it.hour.figures(), Day: it.day.figures()}, true
}

// counted reports whether the flow behind item name/key has counted
// anything (the broker-wide items wait for their first sample).
func (s *Stats) counted(name, key string) bool {
	switch name {
	case StatsTopicPutNums, StatsTopicPutSize:
		found := false
		s.RangeIn(func(k TopicType, _ *InFlow) bool {
			found = k.Topic == key
			return !found
		})
		return found
	case StatsGroupGetNums, StatsGroupGetSize:
		topic, group, ok := strings.Cut(key, "@")
		if !ok {
			return false
		}
		_, found := s.out.Load(GroupTopic{group, topic})
		return found
	}
	return false
}

// sampleItems records every key's counters at now into the windows tick
// selects (tick 0: all; every 60th: the hour's too; every 360th: the day's).
func (s *Stats) sampleItems(now time.Time, tick int64, cluster string) {
	type counts struct{ times, msgs, bytes int64 }
	keyed := map[[2]string]counts{}
	puts := map[string]counts{}
	s.RangeIn(func(k TopicType, f *InFlow) bool {
		c := puts[k.Topic]
		c.times, c.msgs, c.bytes = c.times+f.Calls.Load(), c.msgs+f.Msgs.Load(), c.bytes+f.Bytes.Load()
		puts[k.Topic] = c
		return true
	})
	for t, c := range puts {
		keyed[[2]string{StatsTopicPutNums, t}] = counts{c.times, c.msgs, 0}
		keyed[[2]string{StatsTopicPutSize, t}] = counts{c.times, c.bytes, 0}
	}
	s.RangeOut(func(k GroupTopic, f *Flow) bool {
		key := k.Topic + "@" + k.Group
		calls := f.Calls.Load()
		keyed[[2]string{StatsGroupGetNums, key}] = counts{calls, f.Msgs.Load(), 0}
		keyed[[2]string{StatsGroupGetSize, key}] = counts{calls, f.Bytes.Load(), 0}
		return true
	})
	if n := s.totIn.Calls.Load(); n > 0 {
		keyed[[2]string{StatsBrokerPutNums, cluster}] = counts{n, s.totIn.Msgs.Load(), 0}
	}
	if n := s.totOut.Calls.Load(); n > 0 {
		keyed[[2]string{StatsBrokerGetNums, cluster}] = counts{n, s.totOut.Msgs.Load(), 0}
	}
	ms := now.UnixMilli()
	for k, c := range keyed {
		s.items.mu.RLock()
		it := s.items.items[k]
		s.items.mu.RUnlock()
		if it == nil {
			it = newStatItem()
			s.items.mu.Lock()
			if s.items.items == nil {
				s.items.items = make(map[[2]string]*statItem)
			}
			s.items.items[k] = it
			s.items.mu.Unlock()
		}
		it.mu.Lock()
		it.minute.sample(ms, c.times, c.msgs)
		if tick%60 == 0 {
			it.hour.sample(ms, c.times, c.msgs)
		}
		if tick%360 == 0 {
			it.day.sample(ms, c.times, c.msgs)
		}
		it.mu.Unlock()
	}
}

// runItems samples every statsSecondTick until quit closes; cluster names
// the broker-wide items.
func (s *Stats) RunItems(quit <-chan struct{}, cluster func() string) {
	t := time.NewTicker(statsSecondTick)
	defer t.Stop()
	s.sampleItems(time.Now(), 0, cluster())
	for tick := int64(1); ; tick++ {
		select {
		case <-quit:
			return
		case now := <-t.C:
			s.sampleItems(now, tick, cluster())
		}
	}
}
