package remoting

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"maps"
	"testing"
)

// fuzzArena is shared by the fuzz inputs, as one connection's requests share it.
var fuzzArena []byte

func FuzzDecodeFrame(f *testing.F) {
	seeds := []*Command{
		{Code: 105, Opaque: 7, ExtFields: Fields(map[string]string{"topic": "TopicTest"})},
		{Code: 11, Opaque: -1, Flag: 1, Remark: "r", ExtFields: Fields(map[string]string{"a": "b"}), Body: []byte("x"), Serialize: RocketMQ},
		{Code: 34, Language: LangGo, Version: 317, Body: []byte(`{"clientID":"x"}`)},
		{Code: 10, Opaque: 3, ExtFields: Fields(map[string]string{"a": "1", "b": "2", "c": "3", "d": "\x01"})},
		{Code: 10, Opaque: 3, ExtFields: Fields(map[string]string{"a": "1", "b": "2", "c": "3"}), Serialize: RocketMQ},
	}
	for _, c := range seeds {
		f.Add(AppendFrame(nil, c)[4:])
	}
	f.Add([]byte(`{"code":34,"language":"GO","version":317,"opaque":5,"flag":0,"remark":"","extFields":{}}`))
	f.Fuzz(func(t *testing.T, frame []byte) {
		c, err := DecodeFrame(frame)
		if err != nil {
			return
		}
		// The hand-written JSON parser must not accept what is not JSON.
		if c.Serialize == JSON {
			if h := frame[4 : 4+binary.BigEndian.Uint32(frame)&0xFFFFFF]; !json.Valid(h) {
				t.Fatalf("accepted invalid JSON header %q", h)
			}
		}
		// What decodes must re-encode and decode to the same command.
		again, err := DecodeFrame(AppendFrame(nil, c)[4:])
		if err != nil {
			t.Fatalf("re-decode: %v", err)
		}
		if again.Code != c.Code || again.Opaque != c.Opaque || len(again.ExtFields) > len(c.ExtFields) {
			t.Fatalf("round trip changed command: %+v vs %+v", again, c)
		}
		// A recycled command left dirty by an earlier request decodes the same.
		pooled := newPooledRequest(len(frame))
		copy(pooled.frame, frame)
		if err := decodeInto(pooled, pooled.frame, &fuzzArena, 0); err != nil {
			t.Fatalf("pooled decode: %v", err)
		}
		if !maps.Equal(pooled.FieldMap(), c.FieldMap()) || pooled.Remark != c.Remark || !bytes.Equal(pooled.Body, c.Body) {
			t.Fatalf("pooled decode differs: %+v vs %+v", pooled, c)
		}
		pooled.recycle()
		// With a field limit, the fixed fields survive and nothing else is kept.
		limited := newPooledRequest(len(frame))
		copy(limited.frame, frame)
		err = decodeInto(limited, limited.frame, &fuzzArena, 2)
		switch {
		case len(c.ExtFields) > 2 && !errors.Is(err, ErrTooManyFields):
			t.Fatalf("%d fields with limit 2: %v", len(c.ExtFields), err)
		case len(c.ExtFields) > 2 && (limited.Code != c.Code || limited.Opaque != c.Opaque || limited.Flag != c.Flag ||
			limited.Serialize != c.Serialize || len(limited.ExtFields) != 0):
			t.Fatalf("limited decode: %+v vs %+v", limited, c)
		case len(c.ExtFields) <= 2 && err != nil:
			t.Fatalf("%d fields with limit 2: %v", len(c.ExtFields), err)
		}
		limited.recycle()
	})
}
