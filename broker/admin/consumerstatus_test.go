package admin

import (
	"strconv"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/broker/tables"
)

// The broker's GetConsumerStatusBody places queues and clients as a Java
// HashMap does (orders printed by java.util.HashMap with
// MessageQueue.hashCode and String.hashCode, Java 17).
func TestConsumerStatusHashMapOrder(t *testing.T) {
	var offs []QueueOffset
	for q := int32(0); q < 20; q++ {
		offs = append(offs, QueueOffset{Queue: tables.MessageQueue{Topic: "TopicX", BrokerName: "broker-a", QueueID: q}, Offset: int64(q)})
	}
	body := string(AppendConsumerStatus(nil, []ClientOffsets{{ClientID: "c1", Offsets: offs}}))
	var got []string
	for _, part := range strings.Split(body, `"queueId":`)[1:] {
		got = append(got, part[:strings.IndexByte(part, ',')])
	}
	if want := "4 5 2 3 0 1 19 18 16 17 14 15 12 13 10 11 8 9 6 7"; strings.Join(got, " ") != want {
		t.Fatalf("queue order %v, want %s", got, want)
	}
	parsed, err := ParseClientConsumerStatus([]byte(`{"consumerTable":{},"messageQueueTable":` + body[len(`{"consumerTable":{"c1":`):len(body)-len(`},"messageQueueTable":{}}`)] + `}`))
	if err != nil || len(parsed) != 20 {
		t.Fatalf("parse back: %d %v", len(parsed), err)
	}
	for _, p := range parsed {
		if strconv.Itoa(int(p.Queue.QueueID)) != strconv.FormatInt(p.Offset, 10) {
			t.Fatalf("parsed %+v", p)
		}
	}
	for _, bad := range []string{``, `{`, `{"messageQueueTable":{"a":1}}`, `{"messageQueueTable":{{"queueId":0}:"x"}}`, `{"messageQueueTable":[1]}`} {
		if _, err := ParseClientConsumerStatus([]byte(bad)); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}
