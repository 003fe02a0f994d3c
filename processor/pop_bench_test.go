package processor

import (
	"context"
	"encoding/base64"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// BenchmarkPopAck measures pop consumption over a real socket, one client,
// one request at a time: POP_MESSAGE of 32 1 KiB messages, then one
// BATCH_ACK_MESSAGE of all 32 (the 5.x client's batch ack). An op is one
// message popped and acked: the checkpoint and the ack records in the revive
// log included.
func BenchmarkPopAck(b *testing.B) {
	const n = 32 * 256
	br := benchBroker(b, n, 1024)
	if err := br.Groups.Put(tables.DefaultGroupConfig("G")); err != nil {
		b.Fatal(err)
	}
	cl := remoting.NewClient(testutil.Logger())
	b.Cleanup(func() { _ = cl.Close() })
	ctx := context.Background()
	call := func(req *remoting.Command) *remoting.Command {
		resp, err := cl.Invoke(ctx, br.Config().Addr(), req)
		if err != nil {
			b.Fatal(err)
		}
		return resp
	}
	bits := base64.StdEncoding.EncodeToString([]byte{0xff, 0xff, 0xff, 0xff})
	b.SetBytes(1024)
	b.ResetTimer()
	for done := 0; done < b.N; {
		resp := call(popReq(0, 32, time.Minute, 0))
		if resp.Code != remoting.Success {
			// The queue is drained: the next round reads it again from the start.
			b.StopTimer()
			br.Offsets.Commit("G", "T", 0, 0)
			b.StartTimer()
			continue
		}
		var h remoting.PopMessageResponseHeader
		if err := h.Decode(resp); err != nil {
			b.Fatal(err)
		}
		start := h.StartOffsetInfo[len("0 0 "):]
		body := `{"acks":[{"b":"` + bits + `","c":"G","it":60000,"pt":` + strconv.FormatInt(h.PopTime, 10) +
			`,"q":0,"r":"0","rq":0,"so":` + start + `,"t":"T"}],"brokerName":"b"}`
		if r := call(remoting.NewRequest(remoting.BatchAckMessage, nil, []byte(body))); r.Code != remoting.Success {
			b.Fatalf("batch ack: %d %s", r.Code, r.Remark)
		}
		done += 32
	}
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "msgs/s")
}
