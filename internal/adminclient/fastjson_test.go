package adminclient

import (
	"strings"
	"testing"
)

// TestObjectKeyedTable: a TopicStatsTable and a ResetOffsetBody as Apache's
// broker writes them (fastjson: MessageQueue objects as map keys).
func TestObjectKeyedTable(t *testing.T) {
	body := []byte(`{"offsetTable":{{"brokerName":"b","queueId":1,"topic":"T"}:{"lastUpdateTimestamp":7,"maxOffset":2,"minOffset":0},` +
		`{"brokerName":"b","queueId":0,"topic":"T"}:{"lastUpdateTimestamp":0,"maxOffset":3,"minOffset":1}},"topicPutTps":0.0}`)
	table, err := field(body, "offsetTable")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	err = queueMap(table, func(mq MessageQueue, v []byte) error {
		got = append(got, mq.Topic+"/"+mq.BrokerName+"/"+string(rune('0'+mq.QueueID))+"="+string(v))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	want := `T/b/1={"lastUpdateTimestamp":7,"maxOffset":2,"minOffset":0} T/b/0={"lastUpdateTimestamp":0,"maxOffset":3,"minOffset":1}`
	if strings.Join(got, " ") != want {
		t.Fatalf("got %v", got)
	}
	if tps, _ := field(body, "topicPutTps"); string(tps) != "0.0" {
		t.Fatalf("topicPutTps %q", tps)
	}
	reset := []byte(`{"offsetTable":{{"brokerName":"b","queueId":0,"topic":"T"}:5}}`)
	table, _ = field(reset, "offsetTable")
	n := 0
	if err := queueMap(table, func(mq MessageQueue, v []byte) error { n++; return nil }); err != nil || n != 1 {
		t.Fatalf("reset body: %d %v", n, err)
	}
}

// TestQueueMapHostile: a malformed table is an error, never a panic.
func TestQueueMapHostile(t *testing.T) {
	for _, b := range []string{"", "{", `{{"x":1}:`, `{"a":1}`, `{{"queueId":"x"}:1}`} {
		if err := queueMap([]byte(b), func(MessageQueue, []byte) error { return nil }); err == nil && b != "" {
			t.Errorf("%q accepted", b)
		}
	}
}
