package main

// Route queries: GET_ROUTEINFO_BY_TOPIC (105) to the first name server, -c
// connections each keeping -w queries in flight, the topics (-t, or -topics)
// taken round robin. A client asks for its topics' routes every 30 s per
// topic, so a name server's route QPS bounds how many clients and topics it
// serves. The role "route" counts answers with SUCCESS and their bytes;
// anything else (TOPIC_NOT_EXIST, SYSTEM_BUSY) is a failure.

import (
	"fmt"
	"io"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/internal/adminclient"
	"github.com/rocketgo/rocketgo/remoting"
)

// smallBuf is the buffer size of connections that carry small answers
// (routes, heartbeats): a thousand of them stay a few MiB.
const smallBuf = 16 << 10

type querier struct {
	c      *pconn
	st     *stats
	topics []string
	next   int // index of the next topic

	window   int32
	free     chan int32
	start    []int64 // per slot: send time (nanotime); 0 = free
	seq      int32
	inflight atomic.Int32
	sent     int64
}

func newQuerier(o *options, addr string, idx int, topics []string, st *stats) (*querier, error) {
	q := &querier{st: st, topics: topics, next: idx % len(topics), window: int32(o.window)}
	q.free = make(chan int32, q.window)
	for i := int32(0); i < q.window; i++ {
		q.free <- i
	}
	q.start = make([]int64, q.window)
	c, err := dialPconn(addr, o.ser, smallBuf, q.onResp)
	if err != nil {
		return nil, err
	}
	q.c = c
	return q, nil
}

func (q *querier) onResp(r *resp) {
	now := nanotime()
	slot := r.opaque % q.window
	if slot < 0 || q.start[slot] == 0 {
		return
	}
	if r.code == remoting.Success {
		q.st.add(1, int64(len(r.body)), now-q.start[slot])
	} else {
		q.st.fail(r.code)
	}
	q.start[slot] = 0
	q.inflight.Add(-1)
	q.free <- slot
}

func (q *querier) appendQuery(slot int32) {
	q.seq++
	if q.seq > math.MaxInt32/q.window-1 {
		q.seq = 1
	}
	w := &q.c.w
	w.begin(remoting.GetRouteInfoByTopic, q.seq*q.window+slot)
	w.strS("topic", q.topics[q.next])
	w.end()
	q.next++
	if q.next == len(q.topics) {
		q.next = 0
	}
	q.sent++
	q.start[slot] = nanotime()
	q.inflight.Add(1)
}

// run queries until quota queries were sent (quota <= 0: no limit) or stop
// closes, then waits up to drain for the answers.
func (q *querier) run(quota int64, stop <-chan struct{}, drain time.Duration) error {
	defer q.c.close()
	var err error
loop:
	for quota <= 0 || q.sent < quota {
		var slot int32
		select {
		case slot = <-q.free:
		case <-stop:
			break loop
		case <-q.c.done:
			break loop
		}
		q.appendQuery(slot)
		for len(q.c.w.buf) < flushAt && (quota <= 0 || q.sent < quota) {
			select {
			case slot = <-q.free:
				q.appendQuery(slot)
				continue
			default:
			}
			break
		}
		if err = q.c.flush(); err != nil {
			break
		}
	}
	end := time.Now().Add(drain)
	for q.inflight.Load() > 0 && time.Now().Before(end) {
		select {
		case <-q.c.done:
			return q.c.err
		case <-time.After(time.Millisecond):
		}
	}
	for range q.inflight.Load() {
		q.st.fail(-1) // no answer within the drain time
	}
	return err
}

// waitRoutes retries until the name server routes every topic named (a
// broker registers after its port opens) or timeout passes.
func waitRoutes(a *adminclient.Client, topics []string, timeout time.Duration) error {
	end := time.Now().Add(timeout)
	for _, t := range topics {
		for {
			_, err := a.Route(t)
			if err == nil {
				break
			}
			if time.Now().After(end) {
				return fmt.Errorf("no route within %s: %w", timeout, err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	return nil
}

// probeRoute waits until the name server routes -t and prints the time
// since since and how many topics the name server then lists
// (GET_ALL_TOPIC_LIST_FROM_NAMESERVER 206): with -t the last topic a broker
// holds, the time its registration took to reach the name server whole.
func probeRoute(o *options, a *adminclient.Client, out io.Writer, since time.Time) error {
	if err := waitRoutes(a, []string{o.topic}, o.timeout); err != nil {
		return err
	}
	routed := time.Since(since)
	a.Timeout = 30 * time.Second // the list of 50,000 topics is a few MB of JSON
	resp, err := a.CallNamesrv(remoting.GetAllTopicListFromNameServer, nil)
	if err != nil {
		return fmt.Errorf("topic list: %w", err)
	}
	var list struct {
		TopicList []string `json:"topicList"`
	}
	if err := json.Unmarshal(resp.Body, &list); err != nil {
		return fmt.Errorf("topic list: %w (%.200s)", err, resp.Body)
	}
	fmt.Fprintf(out, "PROBE route_ms=%.1f ns_topics=%d\n", float64(routed)/1e6, len(list.TopicList))
	return nil
}

func runRoute(o *options, a *adminclient.Client, out io.Writer, stop <-chan struct{}) ([]summary, error) {
	if len(a.NameServers) == 0 {
		return nil, fmt.Errorf("route: need -n (name server)")
	}
	addr := a.NameServers[0]
	topics := topicNames(o.topic, o.topics)
	a.Timeout = time.Second
	if err := waitRoutes(a, []string{topics[0], topics[len(topics)-1]}, o.timeout); err != nil {
		return nil, err
	}
	fmt.Fprintf(out, "# mqbench route namesrv=%s topics=%d conns=%d window=%d ser=%s count=%d duration=%s\n",
		addr, len(topics), o.conns, o.window, o.ser, o.count, o.duration)
	r := &role{name: "route"}
	qs, err := dialAll(o.conns, func(i int) (*querier, error) { return newQuerier(o, addr, i, topics, r.newStats()) })
	if err != nil {
		return nil, err
	}
	return measured(o, out, stop, nil, r, func(runStop <-chan struct{}) error {
		var wg sync.WaitGroup
		errs := make([]error, len(qs))
		for i, q := range qs {
			quota := share(o.count, len(qs), i)
			if o.count > 0 && quota == 0 {
				q.c.close()
				continue
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				errs[i] = q.run(quota, runStop, 10*time.Second)
			}()
		}
		wg.Wait()
		for _, err := range errs {
			if err != nil {
				return err
			}
		}
		return nil
	})
}

// share is connection i's part of count spread over n connections (0 when
// count is 0: no quota).
func share(count int64, n, i int) int64 {
	if count <= 0 {
		return 0
	}
	q := count / int64(n)
	if int64(i) < count%int64(n) {
		q++
	}
	return q
}

// dialAll makes n clients, at most 64 dials at once (a thousand dials in a
// row overflow the accept queue of a busy server); on a failure the ones
// made are closed.
func dialAll[T interface{ conn() *pconn }](n int, mk func(i int) (T, error)) ([]T, error) {
	out := make([]T, n)
	errs := make([]error, n)
	sem := make(chan struct{}, 64)
	var wg sync.WaitGroup
	for i := range out {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			out[i], errs[i] = mk(i)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			for j, c := range out {
				if errs[j] == nil {
					c.conn().close()
				}
			}
			return nil, fmt.Errorf("connection %d: %w", i, err)
		}
	}
	return out, nil
}

func (q *querier) conn() *pconn { return q.c }
