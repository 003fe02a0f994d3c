package tables

import (
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// apacheFIFOGroup is a group as Apache 5.3.3 writes it (fastjson,
// alphabetical) with every 5.x field away from its default.
const apacheFIFOGroup = `{"attributes":{},"brokerId":0,"consumeBroadcastEnable":false,"consumeEnable":true,` +
	`"consumeFromMinEnable":true,"consumeMessageOrderly":true,"consumeTimeoutMinute":30,"groupName":"fifoG",` +
	`"groupRetryPolicy":{"exponentialRetryPolicy":{"initial":1000,"max":60000,"multiplier":3},"type":"EXPONENTIAL"},` +
	`"groupSysFlag":1,"notifyConsumerIdsChangedEnable":true,"retryMaxTimes":5,"retryQueueNums":1,` +
	`"subscriptionDataSet":[{"expression":"a||b","expressionType":"TAG","topic":"T1","version":7}],` +
	`"whichBrokerWhenConsumeSlowly":1}`

// TestGroupConfigApacheFields: the 5.x fields of a group survive the
// store's file byte for byte, and a group given with only its name gets
// Apache's defaults, as fastjson's constructor gives them.
func TestGroupConfigApacheFields(t *testing.T) {
	path := filepath.Join(t.TempDir(), "subscriptionGroup.json")
	writeFile(t, path, `{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":1},"forbiddenTable":{},`+
		`"subscriptionGroupTable":{"fifoG":`+apacheFIFOGroup+`,"bare":{"groupName":"bare"}}}`)
	g := NewGroups(path, 1024, func() bool { return false })
	if err := g.Load(testutil.Logger()); err != nil {
		t.Fatal(err)
	}
	fifo, ok := g.Get("fifoG")
	if !ok || !fifo.ConsumeMessageOrderly {
		t.Fatalf("fifoG: %+v %v", fifo, ok)
	}
	if got, _ := json.MarshalToString(fifo); got != apacheFIFOGroup {
		t.Errorf("fifoG written back:\n got  %s\n want %s", got, apacheFIFOGroup)
	}
	bare, _ := g.Get("bare")
	const want = `{"attributes":{},"brokerId":0,"consumeBroadcastEnable":true,"consumeEnable":true,` +
		`"consumeFromMinEnable":true,"consumeMessageOrderly":false,"consumeTimeoutMinute":15,"groupName":"bare",` +
		`"groupRetryPolicy":{"type":"CUSTOMIZED"},"groupSysFlag":0,"notifyConsumerIdsChangedEnable":true,` +
		`"retryMaxTimes":16,"retryQueueNums":1,"whichBrokerWhenConsumeSlowly":1}`
	if got, _ := json.MarshalToString(bare); got != want {
		t.Errorf("bare group:\n got  %s\n want %s", got, want)
	}
}

// TestGroupConfigRefusals: what Apache refuses of the 5.x fields is
// refused with its code, and what it leaves unbounded is bounded.
func TestGroupConfigRefusals(t *testing.T) {
	g := NewGroups(filepath.Join(t.TempDir(), "subscriptionGroup.json"), 1024, func() bool { return false })
	for _, c := range []struct {
		name, body string
		code       int32
	}{
		{"an attribute", `{"groupName":"g1","attributes":{"+a":"1"}}`, remoting.SystemError},
		{"an unknown policy", `{"groupName":"g2","groupRetryPolicy":{"type":"LINEAR"}}`, remoting.SystemError},
		{"2,000 retry delays", `{"groupName":"g3","groupRetryPolicy":{"type":"CUSTOMIZED","customizedRetryPolicy":{"next":[` +
			strings.Repeat("1,", 1999) + `1]}}}`, remoting.InvalidParameter},
		{"a bad subscribed topic", `{"groupName":"g4","subscriptionDataSet":[{"topic":"../x","expression":"*"}]}`,
			remoting.InvalidParameter},
	} {
		name, body := c.name, c.body
		var gc GroupConfig
		if err := json.UnmarshalFromString(body, &gc); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		err := g.Put(gc)
		var r *remoting.Refusal
		if !errors.As(err, &r) || r.Code != c.code {
			t.Errorf("%s: Put = %v, want a refusal with code %d", name, err, c.code)
		}
		if g.Contains(gc.GroupName) {
			t.Errorf("%s: group stored", name)
		}
	}
}
