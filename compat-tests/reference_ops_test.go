package compattest

// Operators' requests 5.3.3 serves on a plain broker and name server,
// compared with
// the Apache reference in TestReference: the group forbidden table (353),
// the slave's master flush offset (908), message recall (370, off by
// default), static topics (513), cold data flow control (2001-2003), the
// commit log read-ahead mode (2004), resuming a half message's checks
// (323), and the name server's config (318 / 319).

import (
	"fmt"
	"strings"
	"testing"
)

func staticTopicHeader() map[string]string {
	return map[string]string{"topic": "diffstatic", "readQueueNums": "1", "writeQueueNums": "1", "perm": "6",
		"topicFilterType": "SINGLE_TAG", "defaultTopic": "TBW102"}
}

// steps runs requests in order and renders each answer's code, remark and
// body in one observation.
func steps(t *testing.T, invoke func(t *testing.T, addr string, req *rawCmd) *rawCmd, addr string, reqs ...*rawCmd) observation {
	var b strings.Builder
	o := observation{}
	for i, r := range reqs {
		resp := invoke(t, addr, r)
		fmt.Fprintf(&b, "%d: code=%d remark=%q body=%s; ", i, resp.Code, resp.Remark, resp.Body)
		o.Code += resp.Code
	}
	o.Body = b.String()
	return o
}

func opsProbes(invoke func(t *testing.T, addr string, req *rawCmd) *rawCmd) []probe {
	return []probe{
		// Every 5.x field of SubscriptionGroupConfig away from its
		// default is kept and read back byte for byte; an absent one takes
		// Apache's default.
		{"group with the 5.x fields", func(t *testing.T, tg target, _ string) observation {
			const full = `{"attributes":{},"brokerId":0,"consumeBroadcastEnable":false,"consumeEnable":true,` +
				`"consumeFromMinEnable":true,"consumeMessageOrderly":true,"consumeTimeoutMinute":30,"groupName":"diff5xgroup",` +
				`"groupRetryPolicy":{"exponentialRetryPolicy":{"initial":1000,"max":60000,"multiplier":3},"type":"EXPONENTIAL"},` +
				`"groupSysFlag":1,"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":5,"retryQueueNums":1,` +
				`"subscriptionDataSet":[{"expression":"a||b","expressionType":"TAG","topic":"T1","version":7}],` +
				`"whichBrokerWhenConsumeSlowly":1}`
			return steps(t, invoke, tg.brokerAddr,
				javaRequest(200, nil, []byte(full)),
				javaRequest(352, map[string]string{"group": "diff5xgroup"}, nil),
				javaRequest(200, nil, []byte(`{"groupName":"diff5xbare"}`)),
				javaRequest(352, map[string]string{"group": "diff5xbare"}, nil))
		}},
		// 5.3.3 supports no group attribute: any key is a SYSTEM_ERROR.
		{"group with an attribute", func(t *testing.T, tg target, _ string) observation {
			resp := invoke(t, tg.brokerAddr, javaRequest(200, nil, []byte(`{"groupName":"diff5xattr","attributes":{"+a":"1"}}`)))
			got := invoke(t, tg.brokerAddr, javaRequest(352, map[string]string{"group": "diff5xattr"}, nil))
			return observation{Code: resp.Code*1000 + got.Code}
		}},
		{"group forbidden", func(t *testing.T, tg target, topic string) observation {
			g := map[string]string{"group": "diffforbid", "topic": topic}
			with := func(readable string) map[string]string {
				m := map[string]string{"readable": readable}
				for k, v := range g {
					m[k] = v
				}
				return m
			}
			o := steps(t, invoke, tg.brokerAddr, javaRequest(353, g, nil), javaRequest(353, with("false"), nil),
				javaRequest(353, g, nil), javaRequest(353, with("true"), nil))
			o.Body = strings.ReplaceAll(o.Body, topic, "<topic>")
			return o
		}},
		// 5.3.3's PullMessageProcessor refuses a pull without its
		// subscription (the group known by heartbeat) of a topic whose read
		// bit is taken away; the heartbeat's connection carries the pulls.
		{"pull of a forbidden group", func(t *testing.T, tg target, topic string) observation {
			on := consumerConn(t, tg, "diffforbid@1", "diffforbidpull", "CLUSTERING", topic)
			forbid := func(readable string) {
				invoke(t, tg.brokerAddr, javaRequest(353, map[string]string{"group": "diffforbidpull", "topic": topic, "readable": readable}, nil))
			}
			var b strings.Builder
			o := observation{}
			pull := func() {
				r := pullReq(topic, "diffforbidpull", 0, 0)
				r.ExtFields["subVersion"] = "1"
				resp := on(r)
				o.Code += resp.Code
				remark := strings.ReplaceAll(resp.Remark, topic, "<topic>")
				if resp.Code == 0 {
					// Apache's found pull says "FOUND" (its GetMessageStatus),
					// rocketgo's nothing: docs/compatibility.md.
					remark = "<found>"
				}
				fmt.Fprintf(&b, "code=%d remark=%q; ", resp.Code, remark)
			}
			forbid("false")
			pull()
			forbid("true")
			pull()
			o.Body = b.String()
			return o
		}},
		{"group forbidden without topic", func(t *testing.T, tg target, _ string) observation {
			return refusal(invoke(t, tg.brokerAddr, javaRequest(353, map[string]string{"group": "diffforbid"}, nil)))
		}},
		{"reset master flush offset on a master", func(t *testing.T, tg target, _ string) observation {
			return steps(t, invoke, tg.brokerAddr, javaRequest(908, map[string]string{"masterFlushOffset": "0"}, nil),
				javaRequest(908, nil, nil))
		}},
		{"recall message", func(t *testing.T, tg target, topic string) observation {
			o := steps(t, invoke, tg.brokerAddr,
				javaRequest(370, map[string]string{"topic": topic, "recallHandle": "bm90IGEgaGFuZGxl", "producerGroup": "diffpg"}, nil),
				javaRequest(370, map[string]string{"topic": topic}, nil))
			o.Body = strings.ReplaceAll(o.Body, topic, "<topic>")
			return o
		}},
		{"static topic without a mapping", func(t *testing.T, tg target, _ string) observation {
			return steps(t, invoke, tg.brokerAddr, javaRequest(513, staticTopicHeader(), nil),
				javaRequest(351, map[string]string{"topic": "diffstatic"}, nil))
		}},
		// With a mapping Apache records it (here: a mapping without a
		// topic, its NullPointerException's text as remark); rocketgo has
		// no static topics and refuses. The code is compared.
		{"static topic with a mapping", func(t *testing.T, tg target, _ string) observation {
			return observation{Code: invoke(t, tg.brokerAddr, javaRequest(513, staticTopicHeader(), []byte("{}"))).Code}
		}},
		{"cold data flow control", func(t *testing.T, tg target, _ string) observation {
			return steps(t, invoke, tg.brokerAddr, javaRequest(2003, nil, nil),
				javaRequest(2001, nil, []byte("diffcold=1024\n")), javaRequest(2003, nil, nil),
				javaRequest(2001, nil, []byte("diffcold=notanumber\n")), javaRequest(2001, nil, nil),
				javaRequest(2002, nil, []byte("diffcold")), javaRequest(2003, nil, nil))
		}},
		{"commit log read mode", func(t *testing.T, tg target, _ string) observation {
			return steps(t, invoke, tg.brokerAddr, javaRequest(2004, map[string]string{"READ_AHEAD_MODE": "1"}, nil),
				javaRequest(2004, map[string]string{"READ_AHEAD_MODE": "5"}, nil),
				javaRequest(2004, map[string]string{"READ_AHEAD_MODE": "x"}, nil),
				javaRequest(2004, nil, nil),
				javaRequest(2004, map[string]string{"READ_AHEAD_MODE": "0"}, nil))
		}},
		{"resume check half message", func(t *testing.T, tg target, topic string) observation {
			return steps(t, invoke, tg.brokerAddr, javaRequest(323, map[string]string{"topic": topic, "msgId": "nonsense"}, nil),
				javaRequest(323, nil, nil))
		}},
		{"update name server config", func(t *testing.T, tg target, _ string) observation {
			return steps(t, invoke, tg.nsAddr, javaRequest(318, nil, []byte("kvConfigPath=/tmp/x\n")),
				javaRequest(318, nil, []byte("enableTopicList=true\n")), javaRequest(318, nil, nil))
		}},
	}
}
