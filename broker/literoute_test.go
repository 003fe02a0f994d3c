package broker

import (
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/message"
)

// The write queues of a route as Apache's TopicPublishInfo lists them:
// brokers by name, only those with a master and write permission.
func TestWriteQueueBrokers(t *testing.T) {
	body := []byte(`{"brokerDatas":[{"brokerAddrs":{0:"127.0.0.1:10911"},"brokerName":"b2","cluster":"c"},` +
		`{"brokerAddrs":{0:"127.0.0.1:10921",1:"127.0.0.1:10922"},"brokerName":"b1","cluster":"c"},` +
		`{"brokerAddrs":{1:"127.0.0.1:10931"},"brokerName":"b3","cluster":"c"}],` +
		`"queueDatas":[{"brokerName":"b2","perm":6,"readQueueNums":2,"topicSysFlag":0,"writeQueueNums":2},` +
		`{"brokerName":"b1","perm":6,"readQueueNums":3,"topicSysFlag":0,"writeQueueNums":3},` +
		`{"brokerName":"b3","perm":6,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4},` +
		`{"brokerName":"b4","perm":4,"readQueueNums":4,"topicSysFlag":0,"writeQueueNums":4}]}`)
	got := writeQueueBrokers(body)
	if s := strings.Join(got, ","); s != "b1,b1,b1,b2,b2" {
		t.Fatalf("write queues %s", s)
	}
	// Every lite topic lands on one of them, the same one each time.
	for _, l := range []string{"a", "user-42", "session_x"} {
		i := message.ConsistentHash(int64(message.JavaHash(l)), len(got))
		if i < 0 || i >= len(got) || i != message.ConsistentHash(int64(message.JavaHash(l)), len(got)) {
			t.Fatalf("bucket %d of %d for %s", i, len(got), l)
		}
	}
	if writeQueueBrokers([]byte(`{`)) != nil || writeQueueBrokers([]byte(`{"queueDatas":[{"brokerName":"x","perm":6,"writeQueueNums":99999999}]}`)) != nil {
		t.Fatal("a broken or hostile route gave queues")
	}
}
