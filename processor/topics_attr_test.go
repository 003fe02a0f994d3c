package processor

import (
	"errors"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// CreateTopicRequestHeader.attributes in Apache's AttributeParser format.
func TestParseTopicAttributes(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want map[string]string
		bad  bool
	}{
		{"", nil, false},
		{"+message.type=FIFO", map[string]string{"message.type": "FIFO"}, false},
		{"+message.type=TRANSACTION,+queue.type=SimpleCQ", map[string]string{"message.type": "TRANSACTION", "queue.type": "SimpleCQ"}, false},
		{"+message.type=LITE,+lite.topic.expiration=60", map[string]string{"message.type": "LITE", "lite.topic.expiration": "60"}, false},
		{"+message.type=BOGUS", nil, true},
		{"+lite.topic.expiration=43201", nil, true},
		{"-message.type", nil, true},
		{"message.type=FIFO", nil, true},
		{"+=x", nil, true},
		{"+k=", nil, true},
	} {
		got, err := parseTopicAttributes(tc.in)
		var r *remoting.Refusal
		if tc.bad {
			if !errors.As(err, &r) || r.Code != remoting.InvalidParameter && r.Code != remoting.SystemError {
				t.Errorf("%q: error %v, want an INVALID_PARAMETER or SYSTEM_ERROR refusal", tc.in, err)
			}
			continue
		}
		if err != nil || len(got) != len(tc.want) {
			t.Errorf("%q: %v %v, want %v", tc.in, got, err, tc.want)
			continue
		}
		for k, v := range tc.want {
			if got[k] != v {
				t.Errorf("%q: %s=%q, want %q", tc.in, k, got[k], v)
			}
		}
	}
}
