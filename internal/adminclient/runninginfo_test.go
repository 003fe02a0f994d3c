package adminclient

import (
	"testing"
)

// TestDecodeConsumerRunningInfo: a running info as the official Go client
// writes it (object keys, "dropped", an empty jstack) and as Java's does
// (pop table, user info, no jstack): the orders are Apache's TreeMaps' and
// TreeSet's, the properties a Java Properties'; every cut of it is an error or a value,
// never a panic.
func TestDecodeConsumerRunningInfo(t *testing.T) {
	goBody := `{"properties":{"PROP_CONSUME_TYPE":"CONSUME_PASSIVELY","A":7},"statusTable":{"T":{"pullRT":1.5},"%RETRY%G":{}},` +
		`"subscriptionSet":[{"topic":"T","subString":"*"},{"topic":"%RETRY%G","subString":"*","classFilterMode":true},{"topic":"T","subString":"*"}],` +
		`"mqTable":{{"topic":"T","brokerName":"b","queueId":1}:{"commitOffset":3,"dropped":true},{"topic":"T","brokerName":"b","queueId":0}:{"commitOffset":2}}, "jstack":"" }`
	ci, err := DecodeConsumerRunningInfo([]byte(goBody))
	if err != nil {
		t.Fatal(err)
	}
	if len(ci.Properties) != 2 || ci.Properties[1] != (Property{"A", "7"}) || ci.Properties[0].Value != "CONSUME_PASSIVELY" {
		t.Errorf("properties %v", ci.Properties)
	}
	if len(ci.Subscriptions) != 2 || ci.Subscriptions[0].Topic != "%RETRY%G" || !ci.Subscriptions[0].ClassFilterMode {
		t.Errorf("subscriptions %v", ci.Subscriptions)
	}
	if len(ci.MQTable) != 2 || ci.MQTable[0].QueueID != 0 || ci.MQTable[1].CommitOffset != 3 || ci.MQTable[1].Droped {
		t.Errorf("mqTable %+v", ci.MQTable)
	}
	if len(ci.StatusTable) != 2 || ci.StatusTable[1].Topic != "T" || ci.StatusTable[1].PullRT != 1.5 {
		t.Errorf("statusTable %+v", ci.StatusTable)
	}
	if ci.Jstack == nil || *ci.Jstack != "" {
		t.Errorf("jstack %v", ci.Jstack)
	}
	javaBody := `{"jstack":null,"mqPopTable":{{"brokerName":"b","queueId":0,"topic":"T"}:{"droped":true,"lastPopTimestamp":9,"waitAckCount":4}},` +
		`"mqTable":{},"properties":{},"statusTable":{},"subscriptionSet":[],"userConsumerInfo":{"z":"1","a":"2"}}`
	if ci, err = DecodeConsumerRunningInfo([]byte(javaBody)); err != nil {
		t.Fatal(err)
	}
	if ci.Jstack != nil || len(ci.MQPopTable) != 1 || ci.MQPopTable[0].WaitAckCount != 4 || !ci.MQPopTable[0].Droped ||
		len(ci.UserConsumerInfo) != 2 || ci.UserConsumerInfo[0].Name != "a" {
		t.Errorf("java body: %+v", ci)
	}
	for i := range goBody {
		if _, err := DecodeConsumerRunningInfo([]byte(goBody[:i])); err == nil && i > 0 {
			t.Errorf("cut at %d accepted", i)
		}
	}
}
