package broker

import (
	"testing"
	"time"
)

func TestRuntimeStatsRates(t *testing.T) {
	var puts int64
	t0 := time.Date(2026, 12, 1, 23, 59, 0, 0, time.Local)
	rs := &runtimeStats{started: t0, puts: func() int64 { return puts }, userPuts: func() int64 { return puts }}
	rs.sample(t0)
	r := rs.report(false)
	if r.putTps != "  " || r.getTotalTps != "  " {
		t.Fatalf("rates before 10 s of samples: %q %q, want Apache's empty fields", r.putTps, r.getTotalTps)
	}
	for i := 1; i <= 70; i++ { // 100 puts and 3 pulls (one a miss, 10 messages) a second
		puts += 100
		rs.got(true, 6)
		rs.got(true, 4)
		rs.got(false, 0)
		rs.sample(t0.Add(time.Duration(i) * time.Second))
	}
	r = rs.report(false)
	if r.putTps != "100.0 100.0 " || r.getFoundTps != "2.0 2.0 " || r.getMissTps != "1.0 1.0 " ||
		r.getTransferredTps != "10.0 10.0 " || r.getTotalTps != "3.0 3.0 " {
		t.Errorf("rates: put %q found %q miss %q transferred %q total %q", r.putTps, r.getFoundTps,
			r.getMissTps, r.getTransferredTps, r.getTotalTps)
	}
	// The day changed 60 s in: today's morning is the total then, yesterday's the start's.
	if r.putNow != 7000 || r.putTodayMorning != 6000 || r.putYesterdayMorning != 0 || r.getNow != 700 || r.getTodayMorning != 600 {
		t.Errorf("totals: %+v", r)
	}
	if s := rs.report(true); s.putNow != 0 || s.putTps != "0.0 0.0 " {
		t.Errorf("a slave reports puts: %+v", s)
	}
}

func TestJavaDouble(t *testing.T) {
	for v, want := range map[float64]string{0: "0.0", 1234.5: "1234.5", 3: "3.0", 0.25: "0.25", 1e7: "1.0E7", 12345678.9: "1.23456789E7"} {
		if got := JavaDouble(v); got != want {
			t.Errorf("JavaDouble(%v) = %q, want %q", v, got, want)
		}
	}
}
