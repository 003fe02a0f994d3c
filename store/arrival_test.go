package store

import (
	"errors"
	"sync/atomic"
	"testing"
	"time"
)

// woken records how (and whether) a parked reader was woken.
type woken struct {
	ch chan Woken
}

func newWoken() *woken { return &woken{ch: make(chan Woken, 2)} }

func (w *woken) park(t *testing.T, s *Store, deadline time.Duration, gone func() bool, on ...Position) *Parked {
	t.Helper()
	p := &Parked{Deadline: time.Now().Add(deadline), Gone: gone, Wake: func(why Woken) { w.ch <- why }}
	copy(p.On[:], on)
	if !s.Park(p) {
		t.Fatal("not parked")
	}
	return p
}

func (w *woken) want(t *testing.T, why Woken) {
	t.Helper()
	select {
	case got := <-w.ch:
		if got != why {
			t.Fatalf("woken %v, want %v", got, why)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("not woken (want %v)", why)
	}
	select {
	case got := <-w.ch:
		t.Fatalf("woken twice: %v after %v", got, why)
	case <-time.After(20 * time.Millisecond):
	}
}

func (w *woken) none(t *testing.T) {
	t.Helper()
	select {
	case got := <-w.ch:
		t.Fatalf("woken %v, want still parked", got)
	case <-time.After(50 * time.Millisecond):
	}
}

// A reader parked past its offset in a queue is woken once an entry past
// that offset is dispatched there, not by entries of other queues or
// below its offset; one already passed when it parks is woken at once.
func TestParkWokenByArrival(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	putN(t, s, "T", 1, 0, 2) // T/0 holds 0 and 1
	waitDispatched(t, s, "T", 0, 2)

	past2 := newWoken()
	past2.park(t, s, time.Hour, nil, Position{Topic: "T", QueueID: 0, Offset: 2})
	past3 := newWoken()
	past3.park(t, s, time.Hour, nil, Position{Topic: "T", QueueID: 0, Offset: 3})
	if n := s.arrivals.n.Load(); n != 2 {
		t.Fatalf("parked %d", n)
	}
	putN(t, s, "U", 1, 0, 1)
	past2.none(t)
	putN(t, s, "T", 1, 2, 1) // T/0 offset 2
	past2.want(t, Arrived)
	past3.none(t)
	putN(t, s, "T", 1, 3, 1)
	past3.want(t, Arrived)

	// Offset 1 was read past before the reader parked: woken at once.
	late := newWoken()
	late.park(t, s, time.Hour, nil, Position{Topic: "T", QueueID: 0, Offset: 1})
	late.want(t, Arrived)
	if n := s.arrivals.n.Load(); n != 0 {
		t.Fatalf("parked %d after every wake", n)
	}
}

// A reader waiting on any queue of two topics is woken by an entry in
// either, and by WakeTopic; readers past their deadline are woken Expired,
// earliest first.
func TestParkAnyQueueAndDeadlines(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)

	pop := newWoken()
	pop.park(t, s, time.Hour, nil, Position{Topic: "T", QueueID: AnyQueue}, Position{Topic: "%RETRY%G_T", QueueID: AnyQueue})
	putN(t, s, "%RETRY%G_T", 3, 2, 1) // queue 2
	pop.want(t, Arrived)

	pop.park(t, s, time.Hour, nil, Position{Topic: "T", QueueID: AnyQueue}, Position{Topic: "%RETRY%G_T", QueueID: AnyQueue})
	s.WakeTopic("%RETRY%G_X")
	pop.none(t)
	s.WakeTopic("T")
	pop.want(t, Arrived)

	order := make(chan int, 3)
	for i, d := range []time.Duration{300 * time.Millisecond, 100 * time.Millisecond, 200 * time.Millisecond} {
		p := &Parked{On: [2]Position{{Topic: "V", QueueID: 0}}, Deadline: time.Now().Add(d),
			Wake: func(why Woken) {
				if why != Expired {
					t.Errorf("reader %d woken %v", i, why)
				}
				order <- i
			}}
		if !s.Park(p) {
			t.Fatal("not parked")
		}
	}
	for _, want := range []int{1, 2, 0} {
		select {
		case got := <-order:
			if got != want {
				t.Fatalf("expired reader %d, want %d", got, want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("deadline not kept")
		}
	}
}

// A reader whose requester went away is woken Abandoned within a sweep;
// Shutdown abandons those left and refuses further parks.
func TestParkAbandoned(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	var gone atomic.Bool
	left := newWoken()
	left.park(t, s, time.Hour, gone.Load, Position{Topic: "T", QueueID: 0})
	stays := newWoken()
	stays.park(t, s, time.Hour, nil, Position{Topic: "T", QueueID: 1})
	gone.Store(true)
	left.want(t, Abandoned)
	stays.none(t)

	shutdown(t, s)
	stays.want(t, Abandoned)
	if s.Park(&Parked{On: [2]Position{{Topic: "T"}}, Deadline: time.Now().Add(time.Hour), Wake: func(Woken) {}}) {
		t.Fatal("parked on a closed store")
	}
	if n := s.arrivals.n.Load(); n != 0 {
		t.Fatalf("parked %d after shutdown", n)
	}
}

// waitDispatched waits until topic/queueID holds n entries.
func waitDispatched(t *testing.T, s *Store, topic string, queueID int32, n int64) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for s.MaxOffset(topic, queueID) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s/%d holds %d entries, want %d", topic, queueID, s.MaxOffset(topic, queueID), n)
		}
		time.Sleep(time.Millisecond)
	}
}

// A steady flow of arrivals does not hold back a deadline: a reader that
// re-parks and appends from every wake keeps the waiter busy while
// another's deadline passes.
func TestParkDeadlineUnderArrivals(t *testing.T) {
	s := openStarted(t, testConfig(t.TempDir()))
	defer shutdown(t, s)
	stop := make(chan struct{})
	var chain func(Woken)
	var parked atomic.Int64
	chain = func(why Woken) {
		select {
		case <-stop:
			return
		default:
		}
		if why == Abandoned {
			return
		}
		n := parked.Add(1)
		p := &Parked{On: [2]Position{{Topic: "T", QueueID: 0, Offset: s.MaxOffset("T", 0)}},
			Deadline: time.Now().Add(time.Hour), Wake: chain}
		if !s.Park(p) {
			return
		}
		if _, err := s.Put(testMsg("T", 0, int(n))); err != nil && !errors.Is(err, ErrClosed) {
			t.Error(err) // ErrClosed: the test ended, the store shuts down
		}
	}
	chain(Arrived)
	expired := newWoken()
	expired.park(t, s, 100*time.Millisecond, nil, Position{Topic: "V", QueueID: 0})
	expired.want(t, Expired)
	close(stop)
	if n := parked.Load(); n < 100 {
		t.Fatalf("the chain ran %d times: the test proved nothing", n)
	}
}
