package main

import (
	"encoding/binary"
	"maps"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

func TestReqWriterMatchesCodec(t *testing.T) {
	for _, ser := range []remoting.SerializeType{remoting.RocketMQ, remoting.JSON} {
		t.Run(ser.String(), func(t *testing.T) {
			w := reqWriter{ser: ser}
			w.begin(remoting.SendMessageV2, -77)
			w.strS("a", `grp"\x`)
			w.str("i", []byte("TAGS\x01A\x02KEYS\x01k 1\x02"))
			w.int("g", 1700000000123)
			w.int("e", -1)
			w.end([]byte("hello"), []byte(" world"))
			frame := w.buf
			if n := int(binary.BigEndian.Uint32(frame)); n != len(frame)-4 {
				t.Fatalf("length field %d, frame %d", n, len(frame)-4)
			}
			c, err := remoting.DecodeFrame(frame[4:])
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"a": `grp"\x`, "i": "TAGS\x01A\x02KEYS\x01k 1\x02", "g": "1700000000123", "e": "-1"}
			if c.Code != remoting.SendMessageV2 || c.Opaque != -77 || c.Flag != 0 || c.Serialize != ser ||
				!maps.Equal(c.FieldMap(), want) || string(c.Body) != "hello world" {
				t.Fatalf("decoded %+v ext %q body %q", c, c.ExtFields, c.Body)
			}
		})
	}
}

func TestScanFrameMatchesCodec(t *testing.T) {
	for _, ser := range []remoting.SerializeType{remoting.RocketMQ, remoting.JSON} {
		c := &remoting.Command{Code: remoting.Success, Opaque: 12345, Flag: remoting.FlagResponse, Version: 409,
			Remark: `odd "remark", {"code":7} \ `, Serialize: ser, Body: []byte("BODY")}
		c.Set("nextBeginOffset", "42")
		c.Set("minOffset", "0")
		c.Set("maxOffset", "99")
		c.Set("queueOffset", "-5")
		c.Set("msgId", "7F00000100002A9F0000000000000000")
		frame := remoting.AppendFrame(nil, c)
		var r resp
		if err := scanFrame(frame[4:], &r); err != nil {
			t.Fatalf("%s: %v", ser, err)
		}
		if r.code != 0 || r.opaque != 12345 || r.flag != remoting.FlagResponse || r.nextBeginOffset != 42 ||
			r.minOffset != 0 || r.maxOffset != 99 || r.queueOffset != -5 || string(r.body) != "BODY" {
			t.Fatalf("%s: scanned %+v", ser, r)
		}
	}
	// Apache's JSON response shape, keys in fastjson order, nulls omitted.
	js := []byte(`{"code":19,"extFields":{"suggestWhichBrokerId":"0","nextBeginOffset":"7","minOffset":"0","maxOffset":"7"},"flag":1,"language":"JAVA","opaque":-3,"serializeTypeCurrentRPC":"JSON","version":479}`)
	frame := binary.BigEndian.AppendUint32(nil, uint32(len(js)))
	frame = append(frame, js...)
	var r resp
	if err := scanFrame(frame, &r); err != nil || r.code != 19 || r.opaque != -3 || r.nextBeginOffset != 7 || r.maxOffset != 7 {
		t.Fatalf("apache json: %v %+v", err, r)
	}
	for _, bad := range []string{`{"code":`, `{"code":1,"extFields":{"a":"b"`, `[`, `{"code":"x"}`} {
		f := binary.BigEndian.AppendUint32(nil, uint32(len(bad)))
		if err := scanFrame(append(f, bad...), &r); err == nil {
			t.Errorf("scan %q: no error", bad)
		}
	}
}

func TestHotPathAllocs(t *testing.T) {
	o := &options{topic: "T", group: "G", size: 1024, keys: true, tag: "TagA", uniq: true, batch: 1, window: 8, conns: 1}
	for _, batch := range []int{1, 4} {
		o.batch = batch
		p := &producer{o: o, window: 8, start: make([]int64, 8), nmsgs: make([]int32, 8), body: make([]byte, 1024),
			c: &pconn{}, st: &stats{}}
		p.c.w.ser = remoting.RocketMQ
		p.c.w.buf = make([]byte, 0, 64<<10)
		tg := target{addr: "x", brokerName: "b", topic: "T", queueID: 3}
		p.appendSend(0, &tg, 1<<40) // warm the scratch buffers
		if n := testing.AllocsPerRun(200, func() {
			p.c.w.buf = p.c.w.buf[:0]
			p.appendSend(1, &tg, 1<<40)
		}); n != 0 {
			t.Errorf("batch %d: appendSend allocates %.1f times", batch, n)
		}
		c, err := remoting.DecodeFrame(p.c.w.buf[4:])
		if err != nil || c.Str("b") != "T" || c.Str("e") != "3" {
			t.Fatalf("batch %d: decoded %v %v", batch, c, err)
		}
	}
	for _, ser := range []remoting.SerializeType{remoting.RocketMQ, remoting.JSON} {
		rc := &remoting.Command{Code: 0, Opaque: 1, Flag: remoting.FlagResponse, Serialize: ser}
		rc.Set("nextBeginOffset", "10")
		rc.Set("maxOffset", "10")
		frame := remoting.AppendFrame(nil, rc)
		var r resp
		if n := testing.AllocsPerRun(200, func() { _ = scanFrame(frame[4:], &r) }); n != 0 {
			t.Errorf("%s: scanFrame allocates %.1f times", ser, n)
		}
	}
}

func TestHistQuantiles(t *testing.T) {
	var h hist
	for v := int64(1); v <= 100000; v++ {
		h.record(v * 1000)
	}
	for _, c := range []struct {
		q    float64
		want int64
	}{{0.5, 50_000_000}, {0.99, 99_000_000}, {0.999, 99_900_000}, {1, 100_000_000}} {
		got := h.quantile(c.q)
		if d := float64(got-c.want) / float64(c.want); d < -0.01 || d > 0.01 {
			t.Errorf("q%.3f = %d, want %d ±1%%", c.q, got, c.want)
		}
	}
	for v := int64(0); v < 1<<20; v = v*3/2 + 1 {
		i := histIndex(v)
		if hv := histValue(i); hv < v || (i > 0 && histValue(i-1) >= v) {
			t.Fatalf("value %d in bucket %d with bounds (%d, %d]", v, i, histValue(i-1), hv)
		}
	}
}
