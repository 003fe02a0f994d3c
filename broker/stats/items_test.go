package stats

import (
	"testing"
	"time"
)

// StatsItem's windows: a zero sample a period before the first, the
// figures between the oldest and newest kept samples, 7 kept per minute.
func TestStatsItems(t *testing.T) {
	s := &Stats{}
	if _, ok := s.StatsData(StatsTopicPutNums, "T"); ok {
		t.Fatal("an item before any count")
	}
	t0 := time.UnixMilli(1_000_000_000)
	s.In("T", MessageNormal, 3, 300)
	s.Out("G", "T", 1, 100)
	if d, ok := s.StatsData(StatsGroupGetNums, "T@G"); !ok || d != (StatsData{}) {
		t.Fatalf("counted, not sampled: %+v %v, want zeros", d, ok)
	}
	s.sampleItems(t0, 0, "C")
	d, ok := s.StatsData(StatsTopicPutNums, "T")
	if want := (StatsData{Minute: StatsSnapshot{3, 0.3, 3}, Hour: StatsSnapshot{3, 0.005, 3}, Day: StatsSnapshot{3, 3.0 / 3600, 3}}); !ok || d != want {
		t.Fatalf("after one sample: %+v, want %+v", d, want)
	}
	s.In("T", MessageDelay, 2, 200) // another type: the same topic item
	s.sampleItems(t0.Add(10*time.Second), 1, "C")
	d, _ = s.StatsData(StatsTopicPutNums, "T")
	if want := (StatsSnapshot{5, 0.25, 2.5}); d.Minute != want || d.Hour.Sum != 3 {
		t.Fatalf("after two samples: %+v", d)
	}
	if d, ok := s.StatsData(StatsTopicPutSize, "T"); !ok || d.Minute.Sum != 500 {
		t.Fatalf("put size: %+v %v", d, ok)
	}
	if d, ok := s.StatsData(StatsGroupGetNums, "T@G"); !ok || d.Minute.Sum != 1 || d.Minute.Avgpt != 1 {
		t.Fatalf("group get nums: %+v %v", d, ok)
	}
	if d, ok := s.StatsData(StatsBrokerPutNums, "C"); !ok || d.Minute.Sum != 5 {
		t.Fatalf("broker put nums: %+v %v", d, ok)
	}
	for i := int64(2); i < 10; i++ { // the minute window keeps 7: the zero one and the first go
		s.sampleItems(t0.Add(time.Duration(i)*10*time.Second), i, "C")
	}
	if d, _ = s.StatsData(StatsTopicPutNums, "T"); d.Minute.Sum != 0 || d.Minute.Tps != 0 || d.Hour.Sum != 3 {
		t.Fatalf("after the window moved past the counts: %+v", d)
	}
}
