package processor

import (
	"encoding/binary"
	"io"
	"net"
	"net/netip"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

// benchBroker serves a broker on one event loop with topic T (one queue)
// holding n messages of size bytes, tagged TagA.
func benchBroker(b *testing.B, n, size int) *broker.Broker {
	b.Helper()
	br := runBroker(b, oneLoop(nil), nil)
	if err := br.Topics.Put(tables.TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		b.Fatal(err)
	}
	h := netip.MustParseAddrPort("127.0.0.1:1234")
	props := string(message.AppendProperty(nil, message.PropTags, "TagA"))
	for i := 0; i < n; i += 256 {
		ms := make([]store.PutMessage, 0, 256)
		for j := i; j < min(n, i+256); j++ {
			ms = append(ms, store.PutMessage{Topic: "T", Body: make([]byte, size), BornHost: h, StoreHost: h,
				Properties: props, BornTimestamp: int64(j)})
		}
		if _, err := br.Store.PutBatch(ms, nil); err != nil {
			b.Fatal(err)
		}
	}
	testutil.WaitFor(b, 30*time.Second, func() bool { return br.Store.MaxOffset("T", 0) == int64(n) })
	return br
}

// BenchmarkPull measures PULL_MESSAGE over a real socket on one event loop:
// batches of 8 pipelined pulls that find messages (the catch-up of a
// consumer), answered from the mapped commit log. The client allocates
// nothing, so allocs/op are the broker's per pull.
func BenchmarkPull(b *testing.B) {
	for _, bc := range []struct {
		name string
		max  int
		sub  string
	}{
		{"32x1KiB", 32, "*"},       // writev from the mapping
		{"1x1KiB", 1, "*"},         // copied into the frame (below 16 KiB)
		{"32x1KiBTag", 32, "TagA"}, // TAG filter: the tags code and the record's TAGS
	} {
		b.Run(bc.name, func(b *testing.B) {
			const n = 8192
			br := benchBroker(b, n, 1024)
			nc, err := net.Dial("tcp", br.Config().Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			const batch = 8
			// Pre-encoded batches at offsets spread over the queue.
			var frames [][]byte
			for k := 0; k < 64; k++ {
				var out []byte
				for j := 0; j < batch; j++ {
					off := int64((k*batch+j)*bc.max) % int64(n-bc.max)
					req := remoting.NewRequest(remoting.PullMessage, map[string]string{
						"consumerGroup": "G", "topic": "T", "queueId": "0",
						"queueOffset": strconv.FormatInt(off, 10), "maxMsgNums": strconv.Itoa(bc.max),
						"sysFlag": strconv.Itoa(int(pullSubscription)), "commitOffset": "0", "suspendTimeoutMillis": "0",
						"subscription": bc.sub, "subVersion": "0", "expressionType": "TAG",
					}, nil)
					req.Language, req.Version, req.Opaque = remoting.LangGo, 317, int32(j)
					out = remoting.AppendFrame(out, req)
				}
				frames = append(frames, out)
			}
			in := make([]byte, 1<<20)
			var lp [4]byte
			read := func() {
				if _, err := io.ReadFull(nc, lp[:]); err != nil {
					b.Fatal(err)
				}
				l := binary.BigEndian.Uint32(lp[:])
				if _, err := io.ReadFull(nc, in[:l]); err != nil {
					b.Fatal(err)
				}
				// The code is the header's; a JSON header starts {"code":0,
				if hl := binary.BigEndian.Uint32(in[:4]) & 0xFFFFFF; hl < 10 || string(in[4:13]) != `{"code":0` {
					b.Fatalf("not a SUCCESS answer: %q", in[4:min(int(l), 120)])
				}
			}
			// Warm up: the pools and the page cache.
			for k := range frames {
				if _, err := nc.Write(frames[k]); err != nil {
					b.Fatal(err)
				}
				for range batch {
					read()
				}
			}
			b.SetBytes(int64(bc.max * 1024))
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i += batch {
				if _, err := nc.Write(frames[(i/batch)%len(frames)]); err != nil {
					b.Fatal(err)
				}
				for range batch {
					read()
				}
			}
		})
	}
}
