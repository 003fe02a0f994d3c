package proxy

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/rocketgo/rocketgo/remoting"
)

// Permission bits of a queue (Apache PermName).
const (
	permWrite int32 = 1 << 1
	permRead  int32 = 1 << 2
)

// routeTTL is how long a topic route from the name server is reused
// (Apache's proxy refreshes its TopicRouteService cache every 20 s; a
// shorter reuse finds a new topic sooner).
const routeTTL = 5 * time.Second

// maxRoutes bounds the routes cached (keys are topic names clients send).
const maxRoutes = 10_000

// route is a topic's route from the name server, as TopicRouteData.
type route struct {
	Brokers []struct {
		Cluster     string            `json:"cluster"`
		BrokerName  string            `json:"brokerName"`
		BrokerAddrs map[string]string `json:"brokerAddrs"`
	} `json:"brokerDatas"`
	Queues []struct {
		BrokerName     string `json:"brokerName"`
		ReadQueueNums  int32  `json:"readQueueNums"`
		WriteQueueNums int32  `json:"writeQueueNums"`
		Perm           int32  `json:"perm"`
	} `json:"queueDatas"`

	fetched time.Time
	rr      atomic.Uint32 // round robin over the write queues
	// local is, in local mode, the route narrowed to the local broker: what
	// sends and receives use (nil when the broker has no queue of the topic).
	local *route
}

// narrow returns the part of r on broker name, or nil when it has none.
func (r *route) narrow(name string) *route {
	n := &route{fetched: r.fetched}
	for _, b := range r.Brokers {
		if b.BrokerName == name {
			n.Brokers = append(n.Brokers, b)
		}
	}
	for _, q := range r.Queues {
		if q.BrokerName == name {
			n.Queues = append(n.Queues, q)
		}
	}
	if len(n.Brokers) == 0 || len(n.Queues) == 0 {
		return nil
	}
	return n
}

// master returns brokerName's master address (brokerId 0), or "".
func (r *route) master(brokerName string) string {
	for _, b := range r.Brokers {
		if b.BrokerName == brokerName {
			return b.BrokerAddrs["0"]
		}
	}
	return ""
}

// writeQueue is one queue a message can be sent to.
type writeQueue struct {
	brokerName string
	addr       string
	queueID    int32
}

// writeQueues lists the writable queues of the route whose master is known,
// in route order (as Apache's MessageQueueView write selector).
func (r *route) writeQueues() []writeQueue {
	var out []writeQueue
	for _, q := range r.Queues {
		if q.Perm&permWrite == 0 {
			continue
		}
		addr := r.master(q.BrokerName)
		if addr == "" {
			continue
		}
		for i := int32(0); i < q.WriteQueueNums; i++ {
			out = append(out, writeQueue{brokerName: q.BrokerName, addr: addr, queueID: i})
		}
	}
	return out
}

// errTopicNotFound: the name server knows no route for the topic.
var errTopicNotFound = errors.New("proxy: topic not found")

// cluster reaches name servers and brokers over Remoting.
type cluster struct {
	cl      transport
	timeout time.Duration
	only    string // local mode: the local broker's name; "" in cluster mode
	ns      []string
	nsNext  atomic.Uint32

	mu     sync.Mutex
	routes map[string]*route
}

func newCluster(cl transport, namesrvAddr string, timeout time.Duration) *cluster {
	var ns []string
	for _, a := range strings.Split(namesrvAddr, ";") {
		if a = strings.TrimSpace(a); a != "" {
			ns = append(ns, a)
		}
	}
	return &cluster{cl: cl, timeout: timeout, ns: ns, routes: make(map[string]*route)}
}

// invoke sends one request and waits for its answer within the proxy's
// Remoting timeout (or ctx's end, if sooner).
func (c *cluster) invoke(ctx context.Context, addr string, req *remoting.Command) (*remoting.Command, error) {
	ctx, cancel := callContext(ctx, c.timeout)
	defer cancel()
	return c.cl.Invoke(ctx, addr, req)
}

// callContext bounds a call to a broker or name server by the proxy's own
// timeout d, and ends it when ctx ends. Only d's end is a deadline: the
// Remoting client closes a connection whose call reached its deadline (a
// peer gone without a reset), and a gRPC client's own short deadline, or
// its going away, must not close the connection other clients' calls share.
func callContext(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	call, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
	stop := context.AfterFunc(ctx, cancel) // canceled, not a deadline
	return call, func() {
		stop()
		cancel()
	}
}

// invokeNamesrv tries the name servers in turn, starting at the next one.
func (c *cluster) invokeNamesrv(ctx context.Context, code int32, ext map[string]string) (*remoting.Command, error) {
	var lastErr error
	start := int(c.nsNext.Add(1))
	for i := range c.ns {
		addr := c.ns[(start+i)%len(c.ns)]
		resp, err := c.invoke(ctx, addr, remoting.NewRequest(code, ext, nil))
		if err == nil {
			return resp, nil
		}
		lastErr = err
	}
	if lastErr == nil {
		lastErr = errors.New("proxy: no name server configured")
	}
	return nil, lastErr
}

// route returns topic's route, from the cache while fresh.
func (c *cluster) route(ctx context.Context, topic string) (*route, error) {
	now := time.Now()
	c.mu.Lock()
	r := c.routes[topic]
	c.mu.Unlock()
	if r != nil && now.Sub(r.fetched) < routeTTL {
		return r, nil
	}
	resp, err := c.invokeNamesrv(ctx, remoting.GetRouteInfoByTopic, map[string]string{"topic": topic})
	if err != nil {
		return nil, fmt.Errorf("route of %s: %w", topic, err)
	}
	if resp.Code == remoting.TopicNotExist {
		c.mu.Lock()
		delete(c.routes, topic)
		c.mu.Unlock()
		return nil, fmt.Errorf("route of %s: %w", topic, errTopicNotFound)
	}
	if resp.Code != remoting.Success {
		return nil, fmt.Errorf("route of %s: name server code %d %s", topic, resp.Code, resp.Remark)
	}
	nr := &route{fetched: now}
	if err := json.Unmarshal(remoting.QuoteIntKeys(resp.Body), nr); err != nil {
		return nil, fmt.Errorf("route of %s: %w", topic, err)
	}
	if c.only != "" {
		nr.local = nr.narrow(c.only)
	}
	if r != nil {
		nr.rr.Store(r.rr.Load())
		if r.local != nil && nr.local != nil {
			nr.local.rr.Store(r.local.rr.Load())
		}
	}
	c.mu.Lock()
	if len(c.routes) >= maxRoutes {
		for k, old := range c.routes { // drop the stale ones; the cache is only a cache
			if now.Sub(old.fetched) >= routeTTL {
				delete(c.routes, k)
			}
		}
		if len(c.routes) >= maxRoutes {
			c.routes = make(map[string]*route)
		}
	}
	c.routes[topic] = nr
	c.mu.Unlock()
	return nr, nil
}

// serving is the route sends, receives and acknowledgements use: the
// whole route in cluster mode; in local mode only the local broker's part,
// as Apache's LocalTopicRouteService serves from its broker's topic table.
func (c *cluster) serving(ctx context.Context, topic string) (*route, error) {
	r, err := c.route(ctx, topic)
	if err != nil || c.only == "" {
		return r, err
	}
	if r.local == nil {
		return nil, fmt.Errorf("route of %s on broker %s: %w", topic, c.only, errTopicNotFound)
	}
	return r.local, nil
}
