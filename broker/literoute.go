package broker

// The parents' routes for broker/lite's sharding decision (Apache 5.5
// LiteShardingImpl over TopicRouteInfoManager): a lite topic with no
// messages here is this broker's when the parent's write queue
// ConsistentHash(JavaHash(lite), n) of the route's n sorted write queues
// is one of this broker's. Routes are asked of the name servers off the
// caller's goroutine (LITE_SUBSCRIPTION_CTL runs on an event loop) and kept
// liteRouteTTL; until a parent's first answer, and for a parent without a
// route, the answer is Apache's fallback: this broker. The next
// COMPLETE_ADD (every 30 s) corrects what the fallback let in.

import (
	"context"
	"errors"
	"sort"
	"sync"
	"time"

	"github.com/rocketgo/rocketgo/broker/role"
	"github.com/rocketgo/rocketgo/internal/jsonlib"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

const (
	liteRouteTTL     = 30 * time.Second
	liteRouteTimeout = 3 * time.Second
	// liteRouteMax bounds the parents kept (only LITE topics of this
	// broker's table are asked for).
	liteRouteMax = 4096
)

type liteRoutes struct {
	b  *Broker
	mu sync.Mutex
	m  map[string]*parentRoute // under mu
}

type parentRoute struct {
	brokers  []string // the broker name of each sorted write queue; nil: no route
	fetched  time.Time
	fetching bool
}

// owner reports whether this broker owns lite topic lite of parent.
func (r *liteRoutes) owner(parent, lite string) bool {
	b := r.b
	if tc, ok := b.Topics.Get(parent); !ok || !tc.Lite() || b.Role == nil || b.Config().NamesrvAddr == "" {
		return true
	}
	now := time.Now()
	r.mu.Lock()
	if r.m == nil {
		r.m = map[string]*parentRoute{}
	}
	e := r.m[parent]
	if e == nil {
		if len(r.m) >= liteRouteMax {
			for k := range r.m { // any one: a parent asked again is fetched again
				delete(r.m, k)
				break
			}
		}
		e = &parentRoute{}
		r.m[parent] = e
	}
	if !e.fetching && now.Sub(e.fetched) > liteRouteTTL {
		e.fetching = true
		if !b.Go(func() { r.fetch(parent, e) }) {
			e.fetching = false
		}
	}
	brokers := e.brokers
	r.mu.Unlock()
	if len(brokers) == 0 {
		return true
	}
	return brokers[message.ConsistentHash(int64(message.JavaHash(lite)), len(brokers))] == b.Config().BrokerName
}

func (r *liteRoutes) fetch(parent string, e *parentRoute) {
	ctx, cancel := context.WithTimeout(context.Background(), liteRouteTimeout)
	defer cancel()
	body, err := r.b.Role.TopicRoute(ctx, parent)
	var brokers []string
	switch {
	case errors.Is(err, role.ErrNoRoute):
	case err != nil:
		r.b.sampled.Warn().Err(err).Str("topic", parent).Msg("lite parent route not read")
	default:
		brokers = writeQueueBrokers(body)
	}
	r.mu.Lock()
	e.fetching, e.fetched = false, time.Now()
	if err == nil || errors.Is(err, role.ErrNoRoute) {
		e.brokers = brokers
	}
	r.mu.Unlock()
}

// writeQueueBrokers is the broker name of each write queue of a route, in
// the order Apache's TopicPublishInfo lists them: brokers by name, those
// with a master and a writable queue data, queue ids ascending.
func writeQueueBrokers(body []byte) []string {
	var route struct {
		QueueDatas []struct {
			BrokerName     string `json:"brokerName"`
			WriteQueueNums int32  `json:"writeQueueNums"`
			Perm           int32  `json:"perm"`
		} `json:"queueDatas"`
		BrokerDatas []struct {
			BrokerName  string            `json:"brokerName"`
			BrokerAddrs map[string]string `json:"brokerAddrs"`
		} `json:"brokerDatas"`
	}
	if err := jsonlib.Std.Unmarshal(remoting.QuoteIntKeys(body), &route); err != nil {
		return nil
	}
	masters := map[string]bool{}
	for _, bd := range route.BrokerDatas {
		if bd.BrokerAddrs["0"] != "" {
			masters[bd.BrokerName] = true
		}
	}
	qds := route.QueueDatas
	sort.SliceStable(qds, func(i, j int) bool { return qds[i].BrokerName < qds[j].BrokerName })
	var out []string
	for _, qd := range qds {
		if qd.Perm&message.PermWrite == 0 || !masters[qd.BrokerName] || qd.WriteQueueNums <= 0 || qd.WriteQueueNums > 1<<16 {
			continue
		}
		for range qd.WriteQueueNums {
			out = append(out, qd.BrokerName)
		}
	}
	return out
}
