package stats

import "testing"

func TestStatRates(t *testing.T) {
	var s Stats
	if s.TopicPutTps("T") != 0 || s.ConsumeTps("G", "T") != 0 {
		t.Fatal("rates of unknown keys")
	}
	s.In("T", MessageNormal, 10, 100)
	s.In("T", MessageDelay, 5, 100)
	s.Out("G", "T", 3, 10)
	if s.TopicPutTps("T") != 0 {
		t.Error("a rate before any mark")
	}
	s.markRates(1_000)
	s.In("T", MessageNormal, 30, 100)
	s.Out("G", "T", 60, 10)
	s.markRates(31_000) // 30 s later
	s.In("T", MessageNormal, 300, 100)
	// Over the older mark: (10+5+30+300 - 15) messages in (now - 1 s).
	if got := s.TopicPutTps("T"); got <= 0 || got > 330 {
		t.Errorf("TopicPutTps = %v", got)
	}
	var f *Flow
	s.RangeOut(func(_ GroupTopic, fl *Flow) bool { f = fl; return true })
	if got := f.marks.rate(f.Msgs.Load(), 31_000); got != 2 { // 60 messages in 30 s
		t.Errorf("consume rate over the marks = %v, want 2", got)
	}
}
