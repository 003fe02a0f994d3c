package metrics

import (
	"strconv"
	"time"

	"github.com/rocketgo/rocketgo/message"
)

// The lite groups' consumer gauges, as Apache 5.5's
// LiteConsumerLagCalculator computes them: one row per lite group and
// parent topic (topic is the parent, is_retry "false"), in the same
// families as the other groups' rows, which leave lite groups out.
//
//   - lag and ready (Apache: "for lite, ready == lag"), with
//     liteLagCountMetricsEnable: the sum over the parent's lite topics
//     (LMQs) of the LMQ's end minus the group's offset, for every group
//     with an offset of one (Apache walks the offset table: online or not,
//     lite group or not); an offset below 0 counts 0, and a pair whose sum
//     is 0 has no row;
//   - lag latency, with liteLagLatencyMetricsEnable: now minus the oldest
//     store time the lite pops noted for the pair (stats.LiteLag, fed only
//     with liteLagLatencyCollectEnable); a pair with none has no row.
//
// The lag pass reads no message: per LMQ its end (an atomic) and its
// groups' offsets under the offset table's read lock for that LMQ only.
// It allocates the pairs' map and the store's list of LMQs, nothing per
// LMQ.

type groupTopic struct{ group, topic string }

// liteRow is one (group, parent)'s lite figures.
type liteRow struct {
	lag, oldest       int64
	hasLag, hasOldest bool
}

// liteRows computes the lite groups' rows; nil when neither is enabled.
func (c *collector) liteRows() map[groupTopic]liteRow {
	b := c.b
	if b.LiteLagEnabled == nil {
		return nil
	}
	count, latency := b.LiteLagEnabled()
	if !count && !latency {
		return nil
	}
	rows := map[groupTopic]liteRow{}
	if count {
		b.Store.ForEachLMQ(func(lmq string, end int64) bool {
			parent, _, ok := message.ParseLiteQueue(lmq)
			if !ok || end <= 0 {
				return true
			}
			b.Offsets.EachLMQGroup(lmq, func(group string, off int64) {
				if off < 0 || end <= off {
					return
				}
				k := groupTopic{group, parent}
				r := rows[k]
				r.lag += end - off
				r.hasLag = true
				rows[k] = r
			})
			return true
		})
	}
	if latency && b.LiteLag != nil {
		b.LiteLag.Range(func(group, parent string, oldest int64) bool {
			k := groupTopic{group, parent}
			r := rows[k]
			r.oldest, r.hasOldest = oldest, true
			rows[k] = r
			return true
		})
	}
	return rows
}

// emitLite writes the lite rows the other groups' rows did not take.
func emitLite(rows map[groupTopic]liteRow, emit func(string, float64, ...string)) {
	now := time.Now().UnixMilli()
	for k, r := range rows {
		is := []string{k.group, k.topic, "false", strconv.FormatBool(isSystem(k.topic, k.group))}
		if r.hasLag {
			emit("rocketmq_consumer_lag_messages", float64(r.lag), is...)
			emit("rocketmq_consumer_ready_messages", float64(r.lag), is...)
		}
		if r.hasOldest {
			emit("rocketmq_consumer_lag_latency_milliseconds", float64(since(now, r.oldest)), is...)
		}
	}
}
