package proxy

import (
	"sync"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
)

// client is one gRPC client (x-mq-client-id) the proxy knows: its last
// settings and, while open, its telemetry stream.
type client struct {
	id string

	mu       sync.Mutex // guards the fields below; never held across a stream write
	settings *v2.Settings
	stream   v2.MessagingService_TelemetryServer
	out      chan *v2.TelemetryCommand // the stream's outbound queue, drained by its Telemetry handler
	seen     time.Time
}

// maxTelemetryQueue bounds the commands waiting to be written to one
// client's telemetry stream: a client that does not read its stream loses
// what does not fit (the broker checks a transaction again) instead of
// holding up the proxy's writers.
const maxTelemetryQueue = 64

// send queues cmd for the client's telemetry stream without waiting; false
// when it has none or its queue is full.
func (c *client) send(cmd *v2.TelemetryCommand) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stream == nil {
		return false
	}
	select {
	case c.out <- cmd:
		return true
	default:
		return false
	}
}

// streaming reports whether the client has a telemetry stream open.
func (c *client) streaming() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.stream != nil
}

func (c *client) publishes(topic string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.stream == nil || c.settings == nil || c.settings.GetPublishing() == nil {
		return false
	}
	for _, t := range c.settings.GetPublishing().GetTopics() {
		if t.GetName() == topic {
			return true
		}
	}
	return false
}

// clients is the registry of gRPC clients, bounded by maxClients.
type clients struct {
	max int

	mu   sync.Mutex
	byID map[string]*client
}

func newClients(max int) *clients { return &clients{max: max, byID: make(map[string]*client)} }

// get returns the client with id, creating it; nil when the bound is reached.
func (cs *clients) get(id string, now time.Time) *client {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.byID[id]
	if c == nil {
		if len(cs.byID) >= cs.max {
			cs.evictIdleLocked(now)
			if len(cs.byID) >= cs.max {
				return nil
			}
		}
		c = &client{id: id}
		cs.byID[id] = c
	}
	c.mu.Lock()
	c.seen = now
	c.mu.Unlock()
	return c
}

// lookup returns the client with id, or nil.
func (cs *clients) lookup(id string) *client {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return cs.byID[id]
}

// remove forgets id and returns what was known of it.
func (cs *clients) remove(id string) *client {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	c := cs.byID[id]
	delete(cs.byID, id)
	return c
}

// clientIdle is how long a client without a stream and without calls is
// remembered (Apache: grpcClientIdleTimeMills, 120 s).
const clientIdle = 120 * time.Second

func (cs *clients) evictIdleLocked(now time.Time) {
	for id, c := range cs.byID {
		c.mu.Lock()
		idle := c.stream == nil && now.Sub(c.seen) > clientIdle
		c.mu.Unlock()
		if idle {
			delete(cs.byID, id)
		}
	}
}

// producerOf returns a client with an open telemetry stream that publishes
// topic (the gRPC producer group is the topic, as Apache's proxy uses),
// trying the members in a rotating order.
func (cs *clients) producerOf(topic string, turn int) *client {
	cs.mu.Lock()
	list := make([]*client, 0, 4)
	for _, c := range cs.byID {
		list = append(list, c)
	}
	cs.mu.Unlock()
	for i := range list {
		if c := list[(turn+i)%len(list)]; c.publishes(topic) {
			return c
		}
	}
	return nil
}

// sweep forgets idle clients.
func (cs *clients) sweep(now time.Time) {
	cs.mu.Lock()
	cs.evictIdleLocked(now)
	cs.mu.Unlock()
}
