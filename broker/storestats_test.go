package broker

import (
	"testing"
	"time"
)

// TestStoreStatsMinute: the figures of a minute show only after it rolls
// over, with Apache's ranges and its interpolated percentiles.
func TestStoreStatsMinute(t *testing.T) {
	start := time.Now()
	s := newStoreStats(start)
	for i := 0; i < 50; i++ {
		s.put(0, false)
		s.put(15*time.Millisecond, false)
	}
	s.put(12*time.Second, true)
	s.got(7 * time.Millisecond)
	info := map[string]string{}
	s.report(info, 0, 0)
	want := map[string]string{"putMessageDistributeTime": "null", "putLatency99": "0.00", "putMessageTimesTotal": "1",
		"putMessageAverageSize": "0.0", "putMessageEntireTimeMax": "12000", "getMessageEntireTimeMax": "7",
		"putMessageFailedTimes": "1", "dispatchMaxBuffer": "0"}
	for k, v := range want {
		if info[k] != v {
			t.Errorf("before the roll: %s = %q, want %q", k, info[k], v)
		}
	}
	s.roll(start.Add(30 * time.Second)) // not a minute yet
	if d := s.distribution(); d != "null" {
		t.Errorf("rolled before a minute: %q", d)
	}
	s.roll(start.Add(61 * time.Second))
	s.put(time.Second, false) // the new minute's: not reported yet
	s.report(info, 101, 25856)
	want = map[string]string{
		"putMessageDistributeTime": "[<=0ms]:50 [0~10ms]:0 [10~50ms]:50 [50~100ms]:0 [100~200ms]:0 [200~500ms]:0 " +
			"[500ms~1s]:0 [1~2s]:0 [2~3s]:0 [3~4s]:0 [4~5s]:0 [5~10s]:0 [10s~]:1 ",
		// 101 puts: the 99th is the 49th of the 50 in (14, 15] ms.
		"putLatency99": "14.98", "putLatency999": "15.00",
		"putMessageTimesTotal": "101", "putMessageSizeTotal": "25856", "putMessageAverageSize": "256.0",
	}
	for k, v := range want {
		if info[k] != v {
			t.Errorf("after the roll: %s = %q, want %q", k, info[k], v)
		}
	}
}
