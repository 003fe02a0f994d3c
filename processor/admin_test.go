package processor

import (
	"testing"
	"time"
)

// Maps keyed by MessageQueue must be in fastjson's object-key form, which the
// Java clients and the Go client's reset-offset parser read.
func TestAppendMQKey(t *testing.T) {
	tests := []struct {
		name, broker, topic string
		queue               int32
		want                string
	}{
		{"plain", "broker-a", "T", 3, `{"brokerName":"broker-a","queueId":3,"topic":"T"}`},
		{"retry topic", "b", "%RETRY%cg", 0, `{"brokerName":"b","queueId":0,"topic":"%RETRY%cg"}`},
		{"quote escaped", `b"x`, "T", 1, `{"brokerName":"b\"x","queueId":1,"topic":"T"}`},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := string(appendMQKey(nil, tc.broker, tc.topic, tc.queue)); got != tc.want {
				t.Fatalf("appendMQKey = %s, want %s", got, tc.want)
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
