package adminclient

import (
	"fmt"
	"strconv"

	"github.com/rocketgo/rocketgo/internal/fastjson"
	"github.com/rocketgo/rocketgo/remoting"
)

// GroupConsumeStats is one group's entry of a broker's ConsumeStatsList:
// a ConsumeStats per topic it consumes there.
type GroupConsumeStats struct {
	Group string
	Stats []*ConsumeStats
}

// ConsumeStatsList is GET_BROKER_CONSUME_STATS's body.
type ConsumeStatsList struct {
	Groups    []GroupConsumeStats // in the broker's order
	TotalDiff int64
}

// BrokerConsumeStats asks the broker at addr for every group's consume
// stats (of the order topics only when order).
func (c *Client) BrokerConsumeStats(addr string, order bool, timeoutMillis int64) (*ConsumeStatsList, error) {
	resp, err := c.Call(addr, remoting.GetBrokerConsumeStats, map[string]string{
		"isOrder": strconv.FormatBool(order), "timeoutMillis": strconv.FormatInt(timeoutMillis, 10)}, nil)
	if err != nil {
		return nil, err
	}
	out, err := decodeConsumeStatsList(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("%s: broker consume stats: %w", addr, err)
	}
	return out, nil
}

func decodeConsumeStatsList(b []byte) (*ConsumeStatsList, error) {
	var out ConsumeStatsList
	if td, err := field(b, "totalDiff"); err != nil {
		return nil, err
	} else if td != nil {
		if out.TotalDiff, err = strconv.ParseInt(string(td), 10, 64); err != nil {
			return nil, fmt.Errorf("totalDiff: %w", err)
		}
	}
	list, err := field(b, "consumeStatsList")
	if err != nil || list == nil {
		return &out, err
	}
	maps, err := fastjson.Elements(list)
	if err != nil {
		return nil, fmt.Errorf("consumeStatsList: %w", err)
	}
	for _, m := range maps {
		fs, err := fastjson.Fields(m)
		if err != nil {
			return nil, fmt.Errorf("consumeStatsList: %w", err)
		}
		for _, f := range fs {
			var group string
			if err := json.Unmarshal(f.Key, &group); err != nil {
				return nil, fmt.Errorf("consumeStatsList group: %w", err)
			}
			raws, err := fastjson.Elements(f.Val)
			if err != nil {
				return nil, fmt.Errorf("consumeStatsList %s: %w", group, err)
			}
			g := GroupConsumeStats{Group: group}
			for _, r := range raws {
				cs, err := decodeConsumeStats(r)
				if err != nil {
					return nil, fmt.Errorf("consumeStatsList %s: %w", group, err)
				}
				g.Stats = append(g.Stats, cs)
			}
			out.Groups = append(out.Groups, g)
		}
	}
	return &out, nil
}

// CallStats is one window of a BrokerStatsData.
type CallStats struct {
	Sum   int64   `json:"sum"`
	TPS   float64 `json:"tps"`
	AvgPT float64 `json:"avgpt"`
}

// BrokerStatsData is VIEW_BROKER_STATS_DATA's body.
type BrokerStatsData struct {
	Minute CallStats `json:"statsMinute"`
	Hour   CallStats `json:"statsHour"`
	Day    CallStats `json:"statsDay"`
}

// Sum24h is StatsAllSubCommand.compute24HourSum: the day's sum, else the
// hour's, else the minute's.
func (d *BrokerStatsData) Sum24h() int64 {
	for _, s := range []int64{d.Day.Sum, d.Hour.Sum, d.Minute.Sum} {
		if s != 0 {
			return s
		}
	}
	return 0
}

// BrokerStats asks the broker at addr for one statistic (TOPIC_PUT_NUMS
// of a topic, GROUP_GET_NUMS of "topic@group", ...).
func (c *Client) BrokerStats(addr, name, key string) (*BrokerStatsData, error) {
	resp, err := c.Call(addr, remoting.ViewBrokerStatsData, map[string]string{"statsName": name, "statsKey": key}, nil)
	if err != nil {
		return nil, err
	}
	var d BrokerStatsData
	if err := json.Unmarshal(resp.Body, &d); err != nil {
		return nil, fmt.Errorf("%s: stats %s %s: %w", addr, name, key, err)
	}
	return &d, nil
}
