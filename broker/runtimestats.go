package broker

// Runtime statistics for GET_BROKER_RUNTIME_INFO, as Apache's
// StoreStatsService and BrokerStats keep them (the figures mqadmin's
// clusterList / brokerStatus and the dashboard plot):
//   - every second a snapshot of the counters (puts from Stats, pull gets
//     found / missed / messages transferred counted here) goes into a ring
//     of the last 601: a rate over 10 s, 60 s and 600 s is the difference
//     between the newest snapshot and the one that many seconds older, and
//     is left out ("") until the ring has that many, as Apache's;
//   - at the first snapshot of each day the totals are kept as "today
//     morning" and the previous as "yesterday morning" (BrokerStats.record).
// The counters are atomics on the pull path; the ring is touched once a
// second and on each report.

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

const statsSamples = 600 + 1

type statsSnap struct {
	at                                     int64 // ms
	put, userPut, found, miss, transferred int64
}

type runtimeStats struct {
	started  time.Time
	puts     func() int64 // messages put since start (Stats): the rates
	userPuts func() int64 // of them, those to topics that are not system topics: the day totals

	found, miss, transferred atomic.Int64 // pull answers, counted by the pull path
	store                    *storeStats  // put and get timings (storestats.go)

	mu                     sync.Mutex
	ring                   [statsSamples]statsSnap
	n, next                int // snapshots held; where the next goes
	day                    int // yearday*10000+year of the last snapshot
	putToday, putYesterday int64
	getToday, getYesterday int64
}

func newRuntimeStats(puts, userPuts func() int64) *runtimeStats {
	now := time.Now()
	rs := &runtimeStats{started: now, puts: puts, userPuts: userPuts, store: newStoreStats(now)}
	rs.sample(rs.started)
	return rs
}

// got counts one pull of the store: found or not, and the messages it hands out.
func (rs *runtimeStats) got(found bool, msgs int) {
	if found {
		rs.found.Add(1)
		rs.transferred.Add(int64(msgs))
		return
	}
	rs.miss.Add(1)
}

func (rs *runtimeStats) run(quit <-chan struct{}) {
	t := time.NewTicker(time.Second)
	defer t.Stop()
	for {
		select {
		case <-quit:
			return
		case now := <-t.C:
			rs.sample(now)
		}
	}
}

func (rs *runtimeStats) sample(now time.Time) {
	s := statsSnap{at: now.UnixMilli(), put: rs.puts(), userPut: rs.userPuts(), found: rs.found.Load(),
		miss: rs.miss.Load(), transferred: rs.transferred.Load()}
	day := now.YearDay() + now.Year()*1000
	if rs.store != nil { // nil in tests of the rates alone
		rs.store.roll(now)
	}
	rs.mu.Lock()
	defer rs.mu.Unlock()
	if day != rs.day {
		if rs.day != 0 {
			rs.putYesterday, rs.getYesterday = rs.putToday, rs.getToday
		}
		rs.putToday, rs.getToday = s.userPut, s.transferred
		if rs.day == 0 {
			rs.putYesterday, rs.getYesterday = s.userPut, s.transferred
		}
		rs.day = day
	}
	rs.ring[rs.next] = s
	rs.next = (rs.next + 1) % statsSamples
	rs.n = min(rs.n+1, statsSamples)
}

// runtimeReport is what RuntimeInfo prints: the day totals count puts to
// topics that are not system topics, as Apache's BrokerStats; putsAll
// counts every put, as its StoreStatsService.
type runtimeReport struct {
	putsAll                                                         int64
	putNow, putTodayMorning, putYesterdayMorning                    int64
	getNow, getTodayMorning, getYesterdayMorning                    int64
	putTps, getFoundTps, getMissTps, getTransferredTps, getTotalTps string
}

// report reads the figures; a slave reports no puts (Apache counts puts, not
// replicated bytes).
func (rs *runtimeStats) report(slave bool) runtimeReport {
	rs.mu.Lock()
	defer rs.mu.Unlock()
	r := runtimeReport{
		getNow: rs.transferred.Load(), getTodayMorning: rs.getToday, getYesterdayMorning: rs.getYesterday,
		putTps:            rs.tps(func(s *statsSnap) int64 { return s.put }),
		getFoundTps:       rs.tps(func(s *statsSnap) int64 { return s.found }),
		getMissTps:        rs.tps(func(s *statsSnap) int64 { return s.miss }),
		getTransferredTps: rs.tps(func(s *statsSnap) int64 { return s.transferred }),
		getTotalTps:       rs.tps(func(s *statsSnap) int64 { return s.found + s.miss }),
	}
	if !slave {
		r.putsAll = rs.puts()
		r.putNow, r.putTodayMorning, r.putYesterdayMorning = rs.userPuts(), rs.putToday, rs.putYesterday
	} else {
		r.putTps = rs.tps(func(*statsSnap) int64 { return 0 })
	}
	return r
}

// tps is Apache's "t10 t60 t600": each the rate between the newest snapshot
// and the one that many seconds before it, "" while there is none.
func (rs *runtimeStats) tps(v func(*statsSnap) int64) string {
	var b strings.Builder
	for i, secs := range [...]int{10, 60, 600} {
		if i > 0 {
			b.WriteByte(' ')
		}
		if rs.n <= secs {
			continue
		}
		last := &rs.ring[(rs.next-1+statsSamples)%statsSamples]
		first := &rs.ring[(rs.next-1-secs+2*statsSamples)%statsSamples]
		if d := last.at - first.at; d > 0 {
			b.WriteString(JavaDouble(float64(v(last)-v(first)) / float64(d) * 1000))
		}
	}
	return b.String()
}

// JavaDouble formats v as Java's Double.toString does, which is how
// Apache's figures read ("0.0", "1234.5", "1.0E7").
func JavaDouble(v float64) string {
	a := math.Abs(v)
	if a == 0 || (a >= 1e-3 && a < 1e7) {
		s := strconv.FormatFloat(v, 'f', -1, 64)
		if !strings.Contains(s, ".") {
			s += ".0"
		}
		return s
	}
	s := strconv.FormatFloat(v, 'E', -1, 64) // 1.2345E+07
	mant, exp, _ := strings.Cut(s, "E")
	if !strings.Contains(mant, ".") {
		mant += ".0"
	}
	e, _ := strconv.Atoi(exp)
	return mant + "E" + strconv.Itoa(e)
}
