package metrics

import (
	"math"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
)

// The consumer gauges, computed at scrape as Apache 5.3.3's
// ConsumerLagCalculator computes them: for every online consumer group of
// the subscription group table and every topic it subscribes (not a retry
// topic; a topic of this broker, readable or writable), summed over the
// topic's write queues, and for a pop group once more over its pop retry
// topic (is_retry="true"):
//
//   - lag: the queue's end minus the consumer offset (a pop group's pop
//     offset, plus its messages in flight); lag latency: now minus the
//     store time of the first unconsumed message, 0 when there is none;
//   - in-flight: pulled minus committed (Apache 5.3.3 records a pull
//     offset only for its KV pop service, off by default: for a push or pull
//     group it is the committed offset, so 0 here as there); for a pop group
//     the popped messages not acknowledged yet; queueing latency: now minus
//     the store time of the first message not pulled;
//   - ready: the queue's end minus the pulled (popped) offset.
//
// Counts are Apache's calculateMessageCount with estimateAccumulation (its
// default): for a group whose subscription to the topic is a TAG
// expression other than *, the messages between two offsets whose tags
// code it matches, read from the consume queue (at most
// maxConsumeQueueScan entries or until sampleCountThreshold matches, then
// extrapolated, as Apache); otherwise the offsets' difference.
//
// One pass computes all five. No broker lock is held across a store read:
// offsets are read one queue at a time under the offset table's read lock,
// the store after it is released.

// maxLagQueues bounds the queues one scrape reads for the consumer gauges
// (each costs up to three consume-queue reads and two record reads): past
// it the remaining groups and topics (in name order) are left out of that
// scrape, with a warning at most every maxLagWarnEvery.
const maxLagQueues = 20_000

const maxLagWarnEvery = 10 * time.Minute

// Apache's MessageStoreConfig defaults for the filtered count, and the
// bound on the consume queue entries one scrape reads for it: past it,
// counts are the offsets' difference.
const (
	maxConsumeQueueScan  = 20_000
	sampleCountThreshold = 5_000
	maxLagScan           = 2_000_000
)

// consumerRow is one group and topic's figures.
type consumerRow struct {
	lag, lagTs, inflight, queueTs, ready int64
}

type popQueue struct {
	group, topic string
	queueID      int32
}

type subscribed struct {
	group, topic string
	pop          bool
}

// consumerGauges writes the consumer gauges of the groups that are not lite
// groups (Apache's ConsumerLagCalculator leaves those to the lite one), and
// drops from lite (lite.go) the rows it wrote itself: a group with offsets
// of lite topics that also consumes their parent as any topic would
// otherwise have two rows of one label set, which fails the whole scrape.
func (c *collector) consumerGauges(emit func(string, float64, ...string), lite map[groupTopic]liteRow) {
	b := c.b
	var subs []subscribed
	anyPop := false
	b.Clients.EachSubscribedTopic(func(group, consumeType, topic string) {
		if message.IsRetryTopic(topic) {
			return
		}
		pop := consumeType == "CONSUME_POP"
		anyPop = anyPop || pop
		subs = append(subs, subscribed{group, topic, pop})
	})
	sort.Slice(subs, func(i, j int) bool {
		if subs[i].group != subs[j].group {
			return subs[i].group < subs[j].group
		}
		return subs[i].topic < subs[j].topic
	})
	var inflight map[popQueue]int64
	if anyPop {
		inflight = map[popQueue]int64{}
		b.EachPopInFlight(func(group, topic string, q int32, n int64) { inflight[popQueue{group, topic, q}] += n })
	}
	perm := b.Permission()
	budget := maxLagQueues
	scan := int64(maxLagScan)
	now := time.Now().UnixMilli()
	record := func(s subscribed, r consumerRow, retry bool) {
		if !retry {
			delete(lite, groupTopic{s.group, s.topic})
		}
		is := []string{s.group, s.topic, strconv.FormatBool(retry), strconv.FormatBool(isSystem(s.topic, s.group))}
		emit("rocketmq_consumer_lag_messages", float64(r.lag), is...)
		emit("rocketmq_consumer_lag_latency_milliseconds", float64(since(now, r.lagTs)), is...)
		emit("rocketmq_consumer_inflight_messages", float64(r.inflight), is...)
		emit("rocketmq_consumer_queueing_latency_milliseconds", float64(since(now, r.queueTs)), is...)
		emit("rocketmq_consumer_ready_messages", float64(r.ready), is...)
	}
	for _, s := range subs {
		if gc, ok := b.Groups.Lookup(s.group); !ok || gc.LiteBindTopic() != "" {
			continue
		}
		tc, ok := b.Topics.Get(s.topic)
		if !ok || tc.Perm&perm&(message.PermRead|message.PermWrite) == 0 {
			continue
		}
		if budget < int(tc.WriteQueueNums) {
			c.warnTruncated(len(subs))
			return
		}
		budget -= int(tc.WriteQueueNums)
		sub, _ := b.Clients.Subscription(s.group, s.topic)
		record(s, c.consumerRow(s.group, s.topic, tc.WriteQueueNums, s.pop, inflight, sub, &scan), false)
		if !s.pop {
			continue
		}
		var r consumerRow // no retry topic (yet): zeros, as Apache's without one
		retry := message.PopRetryTopic(s.topic, s.group)
		if rc, ok := b.Topics.Get(retry); ok && rc.Perm&perm&(message.PermRead|message.PermWrite) != 0 {
			if budget < int(rc.WriteQueueNums) {
				c.warnTruncated(len(subs))
				return
			}
			budget -= int(rc.WriteQueueNums)
			sub, _ := b.Clients.Subscription(s.group, retry)
			r = c.consumerRow(s.group, retry, rc.WriteQueueNums, true, inflight, sub, &scan)
		}
		record(s, r, true)
	}
}

// consumerRow sums one group's figures over a topic's queues; sub is its
// subscription to the topic (nil: none known).
func (c *collector) consumerRow(group, topic string, queues int32, pop bool, inflight map[popQueue]int64,
	sub *tables.Subscription, scan *int64) consumerRow {
	st, offs := c.b.Store, c.b.Offsets
	r := consumerRow{lagTs: math.MaxInt64, queueTs: math.MaxInt64}
	for q := int32(0); q < queues; q++ {
		end := max(st.MaxOffset(topic, q), 0)
		committed, ok := offs.Query(group, topic, q)
		if !ok {
			committed = -1
		}
		// The offset the group has read to: a pop group's pop offset (a
		// pop commits as it reads: Apache's latest pop offset), else the
		// committed one (Apache's pull offset for a push or pull group),
		// the end when there is none.
		pulled := committed
		if pulled < 0 {
			pulled = end
		}
		ahead := c.count(sub, topic, q, pulled, end, scan)
		r.ready += ahead
		if pop {
			n := inflight[popQueue{group, topic, q}]
			r.lag += ahead + n
			r.lagTs = min(r.lagTs, c.storeTime(topic, q, pulled-n))
			r.inflight += n
			r.queueTs = min(r.queueTs, c.storeTime(topic, q, pulled))
			continue
		}
		r.lag += ahead // consumed = pulled: nothing is in flight
		r.lagTs = min(r.lagTs, c.storeTime(topic, q, pulled))
		r.queueTs = min(r.queueTs, c.storeTime(topic, q, max(committed, 0))) // queryPullOffset, else 0
	}
	for _, ts := range []*int64{&r.lagTs, &r.queueTs} {
		if *ts < 0 || *ts == math.MaxInt64 {
			*ts = 0
		}
	}
	return r
}

// count is the messages of [from, to) sub matches (see the top of the file).
func (c *collector) count(sub *tables.Subscription, topic string, q int32, from, to int64, scan *int64) int64 {
	n := to - from
	if n <= 0 {
		return 0
	}
	if sub == nil || sub.All() || strings.EqualFold(sub.ExpressionType, "SQL92") || *scan <= 0 {
		return n
	}
	if m := c.b.Store.MinOffset(topic, q); from < m { // Apache moves the window, keeping its length
		from, to = m, m+n
	}
	var raw, match int64
	sampled := false
	for at := from; at < to && !sampled; {
		es := c.b.Store.ReadQueue(topic, q, at, int(min(to-at, 256)))
		if len(es) == 0 {
			break
		}
		for _, e := range es {
			if e.QueueOffset >= to {
				break
			}
			raw++
			if sub.MatchTagsCode(e.TagsCode) {
				match++
			}
			if raw >= maxConsumeQueueScan || match > sampleCountThreshold {
				sampled = true
				break
			}
		}
		at = es[len(es)-1].QueueOffset + 1
	}
	*scan -= raw
	switch {
	case raw == 0:
		return n // nothing readable: Apache's -1, the difference
	case sampled:
		return match * n / raw
	}
	return match
}

// storeTime is the store time of the message at offset, MaxInt64 when there
// is none (Apache's getStoreTimeStamp).
func (c *collector) storeTime(topic string, q int32, offset int64) int64 {
	if offset < 0 {
		return math.MaxInt64
	}
	if ts, ok := c.b.Store.StoreTimeAt(topic, q, offset); ok && ts > 0 {
		return ts
	}
	return math.MaxInt64
}

// since is a latency gauge's value: 0 for no message.
func since(now, ts int64) int64 {
	if ts == 0 {
		return 0
	}
	return now - ts
}

func (c *collector) warnTruncated(groupsTopics int) {
	now := time.Now().UnixNano()
	last := c.lagWarned.Load()
	if now-last < int64(maxLagWarnEvery) || !c.lagWarned.CompareAndSwap(last, now) {
		return
	}
	c.log.Warn().Int("maxQueues", maxLagQueues).Int("groupTopics", groupsTopics).
		Msg("consumer gauges: more queues than one scrape reads; the rest left out")
}
