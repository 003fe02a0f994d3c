package proxy

import (
	"context"
	"testing"
	"time"

	"google.golang.org/protobuf/types/known/durationpb"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
)

// A receive's long-polling time is the request's own when it names one
// (ReceiveMessageActivity), else the deadline's less a reserve; both are
// held within [5 s, 20 s] and within what the deadline leaves.
func TestPollMillis(t *testing.T) {
	s := &Server{cfg: DefaultConfig()}
	for _, c := range []struct {
		name     string
		deadline time.Duration // 0: none
		lp       *durationpb.Duration
		lo, hi   int64
		refused  bool
	}{
		{"the request's own", 15 * time.Second, durationpb.New(6 * time.Second), 6000, 6000, false},
		{"the deadline's less the reserve", 15 * time.Second, nil, 13000, 13500, false},
		{"below the minimum", 15 * time.Second, durationpb.New(time.Second), 5000, 5000, false},
		{"above the maximum, no deadline", 0, durationpb.New(time.Minute), 20000, 20000, false},
		{"no deadline, none named", 0, nil, 20000, 20000, false},
		{"cut to the deadline", 8 * time.Second, durationpb.New(10 * time.Second), 7500, 8000, false},
		{"deadline below the minimum", 3 * time.Second, durationpb.New(10 * time.Second), 0, 0, true},
	} {
		ctx := context.Background()
		if c.deadline > 0 {
			var cancel context.CancelFunc
			ctx, cancel = context.WithTimeout(ctx, c.deadline)
			defer cancel()
		}
		got, st := s.pollMillis(ctx, c.lp)
		if c.refused {
			if st == nil || st.Code != v2.Code_BAD_REQUEST {
				t.Errorf("%s: %d %v, want BAD_REQUEST", c.name, got, st)
			}
			continue
		}
		if st != nil || got < c.lo || got > c.hi {
			t.Errorf("%s: %d %v, want [%d, %d]", c.name, got, st, c.lo, c.hi)
		}
	}
}
