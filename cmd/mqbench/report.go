package main

// Interval reporting: every role (send, pull, e2e) keeps per-connection
// counters and a histogram; the reporter folds them once per interval into a
// row, prints it, keeps it for --csv and --plot, and folds everything into a
// summary at the end.

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"os"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// stats is one connection's share of a role. The reader goroutine records;
// the reporter drains.
type stats struct {
	msgs  atomic.Int64 // messages acknowledged / consumed
	bytes atomic.Int64 // body bytes
	errs  atomic.Int64 // failed requests
	mu    sync.Mutex
	h     hist
	codes map[int32]int64 // failure response codes, under mu
	// notOK: answers that stored the message without SEND_OK
	// (FLUSH_DISK_TIMEOUT, FLUSH_SLAVE_TIMEOUT, SLAVE_NOT_AVAILABLE): counted
	// in msgs, as the clients count them, and by code here. Under mu.
	notOK map[int32]int64
}

func (s *stats) add(msgs, bytes int64, lat int64) {
	s.msgs.Add(msgs)
	s.bytes.Add(bytes)
	if lat >= 0 {
		s.mu.Lock()
		s.h.record(lat)
		s.mu.Unlock()
	}
}

func (s *stats) addLats(msgs, bytes int64, lats []int64) {
	s.msgs.Add(msgs)
	s.bytes.Add(bytes)
	if len(lats) > 0 {
		s.mu.Lock()
		for _, l := range lats {
			s.h.record(l)
		}
		s.mu.Unlock()
	}
}

// storedNotOK counts a stored message answered with code instead of
// SEND_OK.
func (s *stats) storedNotOK(code int32) {
	s.mu.Lock()
	if s.notOK == nil {
		s.notOK = map[int32]int64{}
	}
	s.notOK[code]++
	s.mu.Unlock()
}

func (s *stats) fail(code int32) {
	s.errs.Add(1)
	s.mu.Lock()
	if s.codes == nil {
		s.codes = map[int32]int64{}
	}
	s.codes[code]++
	s.mu.Unlock()
}

// role aggregates the stats of one kind of traffic.
type role struct {
	name  string
	mu    sync.Mutex
	parts []*stats

	lastMsgs, lastBytes, lastErrs int64
	total                         hist
	rows                          []row
}

func (r *role) newStats() *stats {
	s := &stats{}
	r.mu.Lock()
	r.parts = append(r.parts, s)
	r.mu.Unlock()
	return s
}

type row struct {
	t                   float64 // seconds since start, end of interval
	role                string
	msgs, errs          int64
	tps, mbps           float64
	p50, p99, p999, max float64 // ms
}

// sample folds the interval ending at t (dt seconds long) into the totals;
// keep=false folds without adding a row (a final sliver of an interval).
func (r *role) sample(t, dt float64, keep bool) row {
	var iv hist
	var msgs, bytes, errs int64
	r.mu.Lock()
	for _, s := range r.parts {
		msgs += s.msgs.Load()
		bytes += s.bytes.Load()
		errs += s.errs.Load()
		s.mu.Lock()
		iv.merge(&s.h)
		s.h.reset()
		s.mu.Unlock()
	}
	r.mu.Unlock()
	r.total.merge(&iv)
	dm, db, de := msgs-r.lastMsgs, bytes-r.lastBytes, errs-r.lastErrs
	r.lastMsgs, r.lastBytes, r.lastErrs = msgs, bytes, errs
	w := row{t: t, role: r.name, msgs: dm, errs: de, tps: float64(dm) / dt, mbps: float64(db) / dt / (1 << 20),
		p50: ms(iv.quantile(0.5)), p99: ms(iv.quantile(0.99)), p999: ms(iv.quantile(0.999)), max: ms(iv.max)}
	if keep {
		r.rows = append(r.rows, w)
	}
	return w
}

func (r *role) codes() map[int32]int64 {
	return r.sumCodes(func(s *stats) map[int32]int64 { return s.codes })
}

func (r *role) notOKCodes() map[int32]int64 {
	return r.sumCodes(func(s *stats) map[int32]int64 { return s.notOK })
}

func (r *role) sumCodes(of func(*stats) map[int32]int64) map[int32]int64 {
	out := map[int32]int64{}
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, s := range r.parts {
		s.mu.Lock()
		for c, n := range of(s) {
			out[c] += n
		}
		s.mu.Unlock()
	}
	return out
}

func ms(ns int64) float64 { return float64(ns) / 1e6 }

type reporter struct {
	out      io.Writer
	interval time.Duration
	roles    []*role
	start    time.Time
	last     time.Time
	quiet    bool
}

func newReporter(out io.Writer, interval time.Duration, roles ...*role) *reporter {
	now := time.Now()
	return &reporter{out: out, interval: interval, roles: roles, start: now, last: now}
}

func (rp *reporter) header() {
	fmt.Fprintf(rp.out, "%7s %-5s %10s %8s %8s %8s %8s %8s %6s\n",
		"time_s", "role", "tps", "MiB/s", "p50_ms", "p99_ms", "p999_ms", "max_ms", "errs")
}

// tick samples every role for the interval that ends now. A final interval
// shorter than a fifth of the report interval is folded into the totals only
// (unless it is the only one).
func (rp *reporter) tick(final bool) {
	now := time.Now()
	dt := now.Sub(rp.last).Seconds()
	if dt <= 0 {
		return
	}
	rp.last = now
	t := now.Sub(rp.start).Seconds()
	keep := !final || dt >= rp.interval.Seconds()/5 || len(rp.roles[0].rows) == 0
	for _, r := range rp.roles {
		w := r.sample(t, dt, keep)
		if keep && !rp.quiet {
			fmt.Fprintf(rp.out, "%7.1f %-5s %10.0f %8.2f %8.3f %8.3f %8.3f %8.3f %6d\n",
				w.t, w.role, w.tps, w.mbps, w.p50, w.p99, w.p999, w.max, w.errs)
		}
	}
}

// run ticks until stop is closed, then takes a final sample.
func (rp *reporter) run(stop <-chan struct{}) {
	tk := time.NewTicker(rp.interval)
	defer tk.Stop()
	for {
		select {
		case <-tk.C:
			rp.tick(false)
		case <-stop:
			rp.tick(true)
			return
		}
	}
}

// codeList is " code<N>=<count>" for each code, in code order.
func codeList(codes map[int32]int64) string {
	keys := make([]int, 0, len(codes))
	for c := range codes {
		keys = append(keys, int(c))
	}
	sort.Ints(keys)
	var b strings.Builder
	for _, c := range keys {
		fmt.Fprintf(&b, " code%d=%d", c, codes[int32(c)])
	}
	return b.String()
}

// summary is one role's totals; the machine-readable line starts with "SUMMARY".
type summary struct {
	role                      string
	msgs, errs                int64
	seconds, tps, mbps        float64
	p50, p99, p999, max, mean float64
	worstP99                  float64 // the worst interval's p99 (ms): a stall the run's p99 averages away
	firstMs, firstLatMs       float64 // e2e: topic ready to first message consumed, and its latency (ms)
}

func (rp *reporter) summarize(elapsed time.Duration) []summary {
	var out []summary
	for _, r := range rp.roles {
		s := summary{role: r.name, msgs: r.lastMsgs, errs: r.lastErrs, seconds: elapsed.Seconds(),
			p50: ms(r.total.quantile(0.5)), p99: ms(r.total.quantile(0.99)), p999: ms(r.total.quantile(0.999)),
			max: ms(r.total.max), mean: r.total.mean() / 1e6}
		if s.seconds > 0 {
			s.tps = float64(s.msgs) / s.seconds
			s.mbps = float64(r.lastBytes) / s.seconds / (1 << 20)
		}
		for _, w := range r.rows {
			s.worstP99 = max(s.worstP99, w.p99)
		}
		out = append(out, s)
		fmt.Fprintf(rp.out, "SUMMARY role=%s msgs=%d errs=%d seconds=%.3f tps=%.0f mibps=%.2f p50_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f mean_ms=%.3f worst_p99_ms=%.3f\n",
			s.role, s.msgs, s.errs, s.seconds, s.tps, s.mbps, s.p50, s.p99, s.p999, s.max, s.mean, s.worstP99)
		if codes := r.notOKCodes(); len(codes) > 0 {
			fmt.Fprintf(rp.out, "STORED_NOT_OK role=%s%s\n", r.name, codeList(codes))
		}
		if codes := r.codes(); len(codes) > 0 {
			fmt.Fprintf(rp.out, "FAILURES role=%s%s\n", r.name, codeList(codes))
		}
	}
	return out
}

func (rp *reporter) allRows() []row {
	var rows []row
	for _, r := range rp.roles {
		rows = append(rows, r.rows...)
	}
	sort.SliceStable(rows, func(i, j int) bool { return rows[i].t < rows[j].t })
	return rows
}

// writeCSV writes one row per role and interval.
func writeCSV(path string, rows []row) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "time_s,role,msgs,tps,mib_per_s,p50_ms,p99_ms,p999_ms,max_ms,errors")
	for _, r := range rows {
		fmt.Fprintf(w, "%.3f,%s,%d,%.1f,%.3f,%.3f,%.3f,%.3f,%.3f,%d\n",
			r.t, r.role, r.msgs, r.tps, r.mbps, r.p50, r.p99, r.p999, r.max, r.errs)
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// writeSVG draws two panels over time: TPS per role, and p50/p99/p999 latency
// per role (log scale).
func writeSVG(path, title string, rows []row) error {
	const (
		width, height = 900, 620
		left, right   = 70, 150
		panelH        = 230
		top1, top2    = 50, 340
	)
	pw := float64(width - left - right)
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", width, height, width, height)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", width, height)
	fmt.Fprintf(&b, `<text x="%d" y="24" font-size="15">%s</text>`+"\n", left, xmlEscape(title))

	tmax := 1.0
	var tpsMax float64
	latMin, latMax := math.Inf(1), 0.0
	roles := []string{}
	seen := map[string]bool{}
	for _, r := range rows {
		tmax = math.Max(tmax, r.t)
		tpsMax = math.Max(tpsMax, r.tps)
		for _, v := range []float64{r.p50, r.p99, r.p999} {
			if v > 0 {
				latMin = math.Min(latMin, v)
				latMax = math.Max(latMax, v)
			}
		}
		if !seen[r.role] {
			seen[r.role] = true
			roles = append(roles, r.role)
		}
	}
	if tpsMax == 0 {
		tpsMax = 1
	}
	tpsMax = niceCeil(tpsMax)
	if latMax == 0 {
		latMin, latMax = 0.01, 1
	}
	lo := math.Pow(10, math.Floor(math.Log10(latMin)))
	hi := math.Pow(10, math.Ceil(math.Log10(latMax)))
	if hi <= lo {
		hi = lo * 10
	}
	x := func(t float64) float64 { return float64(left) + t/tmax*pw }
	yT := func(v float64) float64 { return float64(top1+panelH) - v/tpsMax*panelH }
	yL := func(v float64) float64 {
		v = math.Max(v, lo)
		return float64(top2+panelH) - (math.Log10(v)-math.Log10(lo))/(math.Log10(hi)-math.Log10(lo))*panelH
	}
	axes := func(top int, label string) {
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.0f" height="%d" fill="none" stroke="#444"/>`+"\n", left, top, pw, panelH)
		fmt.Fprintf(&b, `<text x="12" y="%d" transform="rotate(-90 12 %d)">%s</text>`+"\n", top+panelH/2+30, top+panelH/2, label)
		for i := 0; i <= 5; i++ {
			t := tmax * float64(i) / 5
			fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">%.0fs</text>`+"\n", x(t), top+panelH+16, t)
		}
	}
	axes(top1, "messages/s")
	for i := 0; i <= 4; i++ {
		v := tpsMax * float64(i) / 4
		fmt.Fprintf(&b, `<line x1="%d" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, float64(left)+pw, yT(v), yT(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%s</text>`+"\n", left-4, yT(v)+4, human(v))
	}
	axes(top2, "latency ms (log)")
	for v := lo; v <= hi*1.0001; v *= 10 {
		fmt.Fprintf(&b, `<line x1="%d" x2="%.0f" y1="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", left, float64(left)+pw, yL(v), yL(v))
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%g</text>`+"\n", left-4, yL(v)+4, v)
	}
	colors := []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"}
	legendY := top1
	for i, rn := range roles {
		col := colors[i%len(colors)]
		var tps, p50, p99, p999 strings.Builder
		for _, r := range rows {
			if r.role != rn {
				continue
			}
			fmt.Fprintf(&tps, "%.1f,%.1f ", x(r.t), yT(r.tps))
			if r.p50 > 0 {
				fmt.Fprintf(&p50, "%.1f,%.1f ", x(r.t), yL(r.p50))
				fmt.Fprintf(&p99, "%.1f,%.1f ", x(r.t), yL(r.p99))
				fmt.Fprintf(&p999, "%.1f,%.1f ", x(r.t), yL(r.p999))
			}
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="2" points="%s"/>`+"\n", col, strings.TrimSpace(tps.String()))
		for _, pl := range []struct {
			pts  string
			dash string
		}{{p50.String(), ""}, {p99.String(), "6,3"}, {p999.String(), "2,3"}} {
			if pl.pts == "" {
				continue
			}
			fmt.Fprintf(&b, `<polyline fill="none" stroke="%s" stroke-width="1.5" stroke-dasharray="%s" points="%s"/>`+"\n", col, pl.dash, strings.TrimSpace(pl.pts))
		}
		fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="2"/><text x="%d" y="%d">%s TPS</text>`+"\n",
			width-right+10, width-right+30, legendY+i*18, legendY+i*18, col, width-right+35, legendY+i*18+4, xmlEscape(rn))
		for j, name := range []string{"p50", "p99", "p999"} {
			dash := []string{"", "6,3", "2,3"}[j]
			yy := top2 + (i*3+j)*18
			fmt.Fprintf(&b, `<line x1="%d" x2="%d" y1="%d" y2="%d" stroke="%s" stroke-width="1.5" stroke-dasharray="%s"/><text x="%d" y="%d">%s %s</text>`+"\n",
				width-right+10, width-right+30, yy, yy, col, dash, width-right+35, yy+4, xmlEscape(rn), name)
		}
	}
	b.WriteString("</svg>\n")
	return os.WriteFile(path, []byte(b.String()), 0o644)
}

func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func human(v float64) string {
	switch {
	case v >= 1e6:
		return fmt.Sprintf("%.4gM", v/1e6)
	case v >= 1e3:
		return fmt.Sprintf("%.4gk", v/1e3)
	}
	return fmt.Sprintf("%.4g", v)
}

func xmlEscape(s string) string {
	r := strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;")
	return r.Replace(s)
}
