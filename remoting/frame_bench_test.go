package remoting

import "testing"

// A SEND_MESSAGE request as the Go client writes it (JSON, every field present).
var goSendHeader = `{"code":10,"language":"GO","version":317,"opaque":12345,"flag":0,"remark":"",` +
	`"extFields":{"producerGroup":"PG","topic":"BenchTopic","defaultTopic":"TBW102","defaultTopicQueueNums":"4",` +
	`"queueId":"3","sysFlag":"0","bornTimestamp":"1700000000000","flag":"0",` +
	`"properties":"KEYS\u0001k1\u0002UNIQ_KEY\u00017F0000011B2C18B4AAC27A5C1B2D0000\u0002TAGS\u0001TagA\u0002",` +
	`"reconsumeTimes":"0","unitMode":"false","maxReconsumeTimes":"0","batch":"false","bname":"broker-a"}}`

func benchFrame(c *Command, body int) []byte {
	c.Body = make([]byte, body)
	return AppendFrame(nil, c)[4:]
}

func BenchmarkDecodeJSONSend(b *testing.B) {
	frame := append([]byte{0, 0, 0, byte(len(goSendHeader))}, goSendHeader...)
	frame[2] = byte(len(goSendHeader) >> 8)
	frame = append(frame, make([]byte, 1024)...)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		decodePooled(b, frame)
	}
}

func BenchmarkDecodeBinarySendV2(b *testing.B) {
	frame := benchFrame(&Command{Code: SendMessageV2, Opaque: 7, Serialize: RocketMQ, ExtFields: Fields(map[string]string{
		"a": "PG", "b": "BenchTopic", "c": "TBW102", "d": "4", "e": "3", "f": "0", "g": "1700000000000", "h": "0",
		"i": "KEYS\x01k1\x02UNIQ_KEY\x017F0000011B2C18B4AAC27A5C1B2D0000\x02WAIT\x01true\x02", "j": "0", "k": "false", "m": "false", "n": "broker-a",
	})}, 1024)
	b.ReportAllocs()
	b.SetBytes(int64(len(frame)))
	for b.Loop() {
		decodePooled(b, frame)
	}
}

func BenchmarkEncodeSendResponse(b *testing.B) {
	c := &Command{Code: Success, Opaque: 7, Flag: FlagResponse, ExtFields: Fields(map[string]string{
		"msgId": "7F00000100002A9F0000000000000000", "queueId": "3", "queueOffset": "123456",
		"transactionId": "7F0000011B2C18B4AAC27A5C1B2D0000", "MSG_REGION": "DefaultRegion", "TRACE_ON": "true",
	})}
	buf := make([]byte, 0, 1024)
	b.ReportAllocs()
	for b.Loop() {
		buf = AppendFrame(buf[:0], c)
	}
}

// decodePooled is the server's decode: a recycled command, the frame copied
// in (gnet's Read), decoded, recycled after the handler.
func decodePooled(b *testing.B, frame []byte) {
	c := newPooledRequest(len(frame))
	copy(c.frame, frame)
	if err := decodeInto(c, c.frame, &benchArena, 256); err != nil {
		b.Fatal(err)
	}
	c.recycle()
}

// The answer to a send as the handler builds it, from the pool.
func BenchmarkBuildSendResponse(b *testing.B) {
	req := &Command{Opaque: 7}
	buf := make([]byte, 0, 1024)
	var id [32]byte
	b.ReportAllocs()
	for b.Loop() {
		resp := NewResponse(req, Success, "")
		resp.SetBytes("msgId", append(id[:0], "7F00000100002A9F0000000000000000"...))
		resp.SetInt64("queueId", 3)
		resp.SetInt64("queueOffset", 123456)
		resp.Set("transactionId", "7F0000011B2C18B4AAC27A5C1B2D0000")
		resp.Set("MSG_REGION", "DefaultRegion")
		resp.Set("TRACE_ON", "true")
		buf = AppendFrame(buf[:0], resp)
		resp.done()
	}
}

var benchArena []byte // the connection's header text arena
