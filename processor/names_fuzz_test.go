package processor

import (
	"testing"

	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
)

// Heartbeat bodies as the clients send them: the Go client v2.1.2 (its Set
// type marshals as an array, tagsSet/codeSet may be null) and the Java
// clients 4.9 / 5.x (fastjson, sorted keys, 5.x fingerprint fields).
var heartbeatSeeds = []string{
	`{"clientID":"10.0.0.1@12345#1700000000000","producerDataSet":[{"groupName":"PG_orders"}],"consumerDataSet":` +
		`[{"groupName":"CG_orders","consumeType":"CONSUME_PASSIVELY","messageModel":"Clustering",` +
		`"consumeFromWhere":"CONSUME_FROM_FIRST_OFFSET","subscriptionDataSet":[{"classFilterMode":false,` +
		`"topic":"Orders","subString":"TagA || TagB","tagsSet":["TagA","TagB"],"codeSet":["2598919","2598920"],` +
		`"subVersion":1700000000000000000,"expressionType":"TAG"},{"classFilterMode":false,"topic":"%RETRY%CG_orders",` +
		`"subString":"*","tagsSet":null,"codeSet":null,"subVersion":1700000000000000001,"expressionType":"TAG"}],` +
		`"unitMode":false}]}`,
	`{"clientID":"10.0.0.2@4242#55","consumerDataSet":[{"consumeFromWhere":"CONSUME_FROM_LAST_OFFSET",` +
		`"consumeType":"CONSUME_PASSIVELY","groupName":"please_rename_unique_group_name","messageModel":"CLUSTERING",` +
		`"subscriptionDataSet":[{"classFilterMode":false,"codeSet":[],"expressionType":"SQL92",` +
		`"subString":"a > 5 AND b = 'x'","subVersion":1700000000001,"tagsSet":[],"topic":"TopicTest"}],` +
		`"unitMode":false}],"heartbeatFingerprint":0,"producerDataSet":[{"groupName":"CLIENT_INNER_PRODUCER"}],` +
		`"withoutSub":false}`,
	`{"clientID":"x","consumerDataSet":[{"groupName":"../../../tmp/x","subscriptionDataSet":[{"topic":"a/b"}]}],` +
		`"producerDataSet":[{"groupName":"g\u0001"}]}`,
	`{"clientID":"x","consumerDataSet":[],"producerDataSet":[]}`,
}

// No panic; what a decoded heartbeat keeps after the broker's name rules
// (Heartbeat.DropInvalid) passes them.
func FuzzParseHeartbeat(f *testing.F) {
	for _, s := range heartbeatSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		hb, err := decodeHeartbeat(remoting.NewRequest(remoting.HeartBeat, nil, body))
		if err != nil {
			return
		}
		dropped, named := hb.DropInvalid()
		if len(named) > dropped || len(named) > 4 {
			t.Fatalf("%d named of %d dropped", len(named), dropped)
		}
		for _, g := range hb.Producers {
			if err := message.ValidGroupName(g); err != nil {
				t.Fatalf("kept producer group %q: %v", g, err)
			}
		}
		for _, cd := range hb.Consumers {
			if err := message.ValidGroupName(cd.Group); err != nil {
				t.Fatalf("kept consumer group %q: %v", cd.Group, err)
			}
			for _, sd := range cd.Subscriptions {
				if err := message.ValidTopicName(sd.Topic); err != nil {
					t.Fatalf("kept subscription topic %q: %v", sd.Topic, err)
				}
			}
		}
	})
}

// UPDATE_AND_CREATE_SUBSCRIPTIONGROUP through its handler: no panic, and a
// group whose name breaks the rule or whose retry queues are out of bounds
// never enters the table.
func FuzzSubscriptionGroupBody(f *testing.F) {
	for _, s := range []string{
		// mqadmin updateSubGroup (fastjson, 5.x fields)
		`{"attributes":{},"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,"consumeFromMinEnable":true,` +
			`"consumeMessageOrderly":false,"consumeTimeoutMinute":15,"groupName":"CG_admin","groupRetryPolicy":` +
			`{"type":"CUSTOMIZED"},"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":16,` +
			`"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}`,
		`{"groupName":"CG_min"}`,
		`{"groupName":"../../../tmp/x","retryQueueNums":1}`,
		`{"groupName":"g\u0001","retryQueueNums":1}`,
		`{"groupName":"CG_big","retryQueueNums":2147483647}`,
		`{"groupName":""}`,
	} {
		f.Add([]byte(s))
	}
	p, br := newBrokerProcs(f)
	f.Fuzz(func(t *testing.T, body []byte) {
		resp := p.updateSubscriptionGroup(nil, remoting.NewRequest(remoting.UpdateAndCreateSubscription, nil, body))
		var gc struct {
			GroupName      string `json:"groupName"`
			RetryQueueNums *int64 `json:"retryQueueNums"`
		}
		if json.Unmarshal(body, &gc) != nil {
			return
		}
		bad := message.ValidGroupName(gc.GroupName) != nil
		if bad && br.Groups.Contains(gc.GroupName) {
			t.Fatalf("group %q entered the table (answer %d %q)", gc.GroupName, resp.Code, resp.Remark)
		}
		if resp.Code == remoting.Success {
			got, _ := br.Groups.Get(gc.GroupName)
			if bad || got == nil || got.RetryQueueNums < 0 || got.RetryQueueNums > br.Config().MaxTopicQueueNums {
				t.Fatalf("accepted %q: %+v", gc.GroupName, got)
			}
		}
	})
}
