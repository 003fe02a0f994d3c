package processor

import (
	"testing"
)

// FuzzDecodeBatchAck: any BATCH_ACK_MESSAGE body decodes or is refused,
// never panics, and never names more offsets than its bitSet bound allows.
func FuzzDecodeBatchAck(f *testing.F) {
	f.Add([]byte(`{"acks":[{"b":"BQ==","c":"G","it":600,"pt":1,"q":0,"r":"0","rq":0,"so":0,"t":"T"}],"brokerName":"b"}`))
	f.Add([]byte(`{"acks":[{"bitSet":"//8=","consumerGroup":"G","startOffset":9223372036854775800,"topic":"T"}]}`))
	f.Add([]byte(`{"acks":[{"b":"!!"}]}`))
	f.Add([]byte(`{"acks":null}`))
	f.Add([]byte(`[]`))
	f.Fuzz(func(t *testing.T, body []byte) {
		acks, err := decodeBatchAck(body)
		if err != nil {
			return
		}
		for _, a := range acks {
			if len(a.Offsets) > maxBatchAckBits {
				t.Fatalf("%d offsets from one entry", len(a.Offsets))
			}
		}
	})
}
