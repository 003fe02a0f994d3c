package broker

import (
	"testing"
	"time"
)

// Maps keyed by MessageQueue must be in fastjson's object-key form, which the
// Java clients and the Go client's reset-offset parser read.
func TestMessageQueueAppendJSON(t *testing.T) {
	tests := []struct {
		name string
		mq   MessageQueue
		want string
	}{
		{"plain", MessageQueue{BrokerName: "broker-a", Topic: "T", QueueID: 3}, `{"brokerName":"broker-a","queueId":3,"topic":"T"}`},
		{"retry topic", MessageQueue{BrokerName: "b", Topic: "%RETRY%cg"}, `{"brokerName":"b","queueId":0,"topic":"%RETRY%cg"}`},
		{"quote escaped", MessageQueue{BrokerName: `b"x`, Topic: "T", QueueID: 1}, `{"brokerName":"b\"x","queueId":1,"topic":"T"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(tc.mq.AppendJSON(nil)); got != tc.want {
				t.Fatalf("AppendJSON = %s, want %s", got, tc.want)
			}
		})
	}
}

func TestRuntimeText(t *testing.T) {
	d := 26*time.Hour + 3*time.Minute + 4*time.Second
	if got, want := runtimeText(d), "[ 1 days, 2 hours, 3 minutes, 4 seconds ]"; got != want {
		t.Fatalf("runtimeText = %q, want %q", got, want)
	}
}
