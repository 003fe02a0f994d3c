package processor

import (
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// FuzzDecodeLiteCtl: any LITE_SUBSCRIPTION_CTL body decodes or is refused,
// never panics, and never hands the registry more than its bounds.
func FuzzDecodeLiteCtl(f *testing.F) {
	f.Add([]byte(`{"subscriptionSet":[{"action":"PARTIAL_ADD","clientId":"c","group":"G","topic":"P","liteTopicSet":["a","b"],` +
		`"offsetOption":{"type":"POLICY","value":1},"version":1700000000000}]}`))
	f.Add([]byte(`{"subscriptionSet":[{"action":3,"clientId":"c"}]}`))
	f.Add([]byte(`{"subscriptionSet":[{"action":"COMPLETE_ADD","liteTopicSet":[null,""]}]}`))
	f.Add([]byte(`{"subscriptionSet":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		entries, err := decodeCtl(body)
		if err != nil {
			return
		}
		names := 0
		for _, e := range entries {
			names += len(e.Lite)
			for _, l := range e.Lite {
				if l == "" || len(l) > maxCtlNameLen {
					t.Fatalf("name %q passed", l)
				}
			}
		}
		if len(entries) > maxCtlEntries || names > maxCtlLiteNames {
			t.Fatalf("%d entries, %d names passed", len(entries), names)
		}
	})
}

// FuzzDecodePopLite: any POP_LITE_MESSAGE header decodes or is refused,
// never panics; what passes has a non-negative maxMsgNum and bounded ids.
func FuzzDecodePopLite(f *testing.F) {
	f.Add("c1", "G", "P", "32", "60000", "20000", "1700000000000", "uuid")
	f.Add("", "", "", "-1", "x", "", "9223372036854775808", "")
	f.Fuzz(func(t *testing.T, client, group, topic, max, inv, poll, born, attempt string) {
		req := remoting.NewRequest(remoting.PopLiteMessage, map[string]string{"clientId": client, "consumerGroup": group,
			"topic": topic, "maxMsgNum": max, "invisibleTime": inv, "pollTime": poll, "bornTime": born, "attemptId": attempt}, nil)
		r, err := decodePopLite(req)
		if err != nil {
			return
		}
		if r.MaxMsgNum < 0 || len(r.ClientID) > maxCtlNameLen || len(r.AttemptID) > maxCtlNameLen {
			t.Fatalf("passed %+v", r)
		}
	})
}
