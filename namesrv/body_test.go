package namesrv

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/config"
)

func TestDecodeRegisterBody(t *testing.T) {
	tests := []struct {
		name    string
		body    string
		version int32
		want    TopicConfig
		dv      DataVersion
	}{
		{
			name:    "4.9",
			version: 409,
			body:    `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":12,"timestamp":1700000000000},"topicConfigTable":{"T":{"order":false,"perm":6,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4}}}}`,
			want:    TopicConfig{TopicName: "T", ReadQueueNums: 8, WriteQueueNums: 4, Perm: 6},
			dv:      DataVersion{Counter: 12, Timestamp: 1700000000000},
		},
		{
			name:    "5.x with fastjson integer keys in mapping detail",
			version: 479,
			body:    `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":3,"stateVersion":2,"timestamp":5},"mappingDataVersion":{"counter":0,"stateVersion":0,"timestamp":1},"topicConfigTable":{"T":{"attributes":{"+message.type":"NORMAL"},"order":true,"perm":7,"readQueueNums":2,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":1,"writeQueueNums":2}},"topicQueueMappingDetailMap":{"T":{"hostedQueues":{0:[{"bname":"b","gen":0}],-1:[]},"bname":"b"}},"topicQueueMappingInfoMap":{}}}`,
			want:    TopicConfig{TopicName: "T", ReadQueueNums: 2, WriteQueueNums: 2, Perm: 7, TopicSysFlag: 1, Order: true},
			dv:      DataVersion{Counter: 3, StateVersion: 2, Timestamp: 5},
		},
		{
			name:    "pre V3_0_11 bare wrapper",
			version: 30,
			body:    `{"dataVersion":{"counter":1,"timestamp":2},"topicConfigTable":{"T":{"perm":6,"readQueueNums":1,"topicName":"T","writeQueueNums":1}}}`,
			want:    TopicConfig{TopicName: "T", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 6},
			dv:      DataVersion{Counter: 1, Timestamp: 2},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			rb, err := DecodeRegisterBody([]byte(tt.body), tt.version)
			if err != nil {
				t.Fatal(err)
			}
			w := rb.TopicConfigSerializeWrapper
			if got := w.TopicConfigTable["T"]; got != tt.want || w.DataVersion != tt.dv {
				t.Fatalf("got %+v %+v", got, w.DataVersion)
			}
		})
	}
}

func TestDecodeRegisterBodyErrors(t *testing.T) {
	if rb, err := DecodeRegisterBody(nil, 409); err != nil || rb.TopicConfigSerializeWrapper.TopicConfigTable != nil {
		t.Fatalf("empty body: %+v %v", rb, err)
	}
	if _, err := DecodeRegisterBody([]byte(`{"topicConfigSerializeWrapper":`), 409); !errors.Is(err, ErrBadBody) {
		t.Fatalf("truncated body: %v", err)
	}
}

// compressedBody writes Apache's RegisterBrokerBody.encode(true) layout (as
// a 5.3.3 broker with compressedRegister=true sends it); raw overrides the
// topic lines.
func compressedBody(t testing.TB, dv string, lines []string, filters string) []byte {
	var in bytes.Buffer
	put := func(b []byte) {
		_ = binary.Write(&in, binary.BigEndian, int32(len(b)))
		in.Write(b)
	}
	put([]byte(dv))
	_ = binary.Write(&in, binary.BigEndian, int32(len(lines)))
	for _, l := range lines {
		put([]byte(l))
	}
	put([]byte(filters))
	_ = binary.Write(&in, binary.BigEndian, int32(0))
	var out bytes.Buffer
	zw, _ := zlib.NewWriterLevel(&out, zlib.BestCompression)
	if _, err := zw.Write(in.Bytes()); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return out.Bytes()
}

func TestDecodeCompressedRegisterBody(t *testing.T) {
	body := compressedBody(t, `{"counter":3,"stateVersion":1,"timestamp":9}`,
		[]string{`T 8 4 6 SINGLE_TAG {"+message.type":"NORMAL"}`, `U 1 1 4 MULTI_TAG`}, `["10.0.0.1:1"]`)
	if !IsZlib(body) || IsZlib([]byte(`{"filterServerList":[]}`)) || IsZlib([]byte(" {}")) {
		t.Fatal("IsZlib")
	}
	rb, err := DecodeCompressedRegisterBody(body, DefaultMaxRegisterBodyInflated)
	if err != nil {
		t.Fatal(err)
	}
	w := rb.TopicConfigSerializeWrapper
	if w.DataVersion != (DataVersion{Counter: 3, StateVersion: 1, Timestamp: 9}) ||
		w.TopicConfigTable["T"] != (TopicConfig{TopicName: "T", ReadQueueNums: 8, WriteQueueNums: 4, Perm: 6}) ||
		w.TopicConfigTable["U"] != (TopicConfig{TopicName: "U", ReadQueueNums: 1, WriteQueueNums: 1, Perm: 4}) ||
		len(rb.FilterServerList) != 1 {
		t.Fatalf("decoded %+v", rb)
	}

	// Every refusal is ErrBadBody, and nothing is allocated beyond the budget.
	bomb := func() []byte {
		var out bytes.Buffer
		zw, _ := zlib.NewWriterLevel(&out, zlib.BestCompression)
		_ = binary.Write(zw, binary.BigEndian, int32(2))
		zw.Write([]byte("{}"))
		_ = binary.Write(zw, binary.BigEndian, int32(1))
		_ = binary.Write(zw, binary.BigEndian, int32(1<<30)) // a 1 GiB topic line
		zw.Write(make([]byte, 8<<20))
		zw.Close()
		return out.Bytes()
	}()
	for name, b := range map[string][]byte{
		"not zlib":         []byte("{}"),
		"truncated":        body[:len(body)/2],
		"bad line":         compressedBody(t, `{}`, []string{`T 8 x 6 SINGLE_TAG`}, `[]`),
		"short line":       compressedBody(t, `{}`, []string{`T 8 4`}, `[]`),
		"bad filter type":  compressedBody(t, `{}`, []string{`T 8 4 6 NO_TAG`}, `[]`),
		"bad data version": compressedBody(t, `[`, nil, `[]`),
		"bomb":             bomb,
	} {
		if _, err := DecodeCompressedRegisterBody(b, 1<<20); !errors.Is(err, ErrBadBody) {
			t.Errorf("%s: err = %v, want ErrBadBody", name, err)
		}
	}
	// An undecodable filter server list is an empty one, as in Apache.
	if rb, err := DecodeCompressedRegisterBody(compressedBody(t, `{}`, nil, `nope`), 1<<20); err != nil || rb.FilterServerList == nil {
		t.Errorf("bad filter list: %+v %v", rb, err)
	}
}

// A REGISTER_BROKER captured from the Apache 5.3.3 broker with
// compressedRegister=true (testdata/*.header.json holds its header): the body
// is deflated although the header says compressed=false.
func TestDecodeApacheCompressedRegisterBody(t *testing.T) {
	body, err := os.ReadFile("testdata/apache-5.3.3-register-compressed.bin")
	if err != nil {
		t.Fatal(err)
	}
	hdr, err := os.ReadFile("testdata/apache-5.3.3-register-compressed.header.json")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(hdr, []byte(`"compressed":"false"`)) || !IsZlib(body) {
		t.Fatalf("captured header %s / body % x", hdr, body[:2])
	}
	rb, err := DecodeCompressedRegisterBody(body, DefaultMaxRegisterBodyInflated)
	if err != nil {
		t.Fatal(err)
	}
	w := rb.TopicConfigSerializeWrapper
	if len(w.TopicConfigTable) != 13 || w.TopicConfigTable["TBW102"] != (TopicConfig{TopicName: "TBW102", ReadQueueNums: 8, WriteQueueNums: 8, Perm: 7}) ||
		w.DataVersion.Timestamp == 0 || rb.FilterServerList == nil {
		t.Fatalf("decoded %d topics, TBW102 %+v, version %+v", len(w.TopicConfigTable), w.TopicConfigTable["TBW102"], w.DataVersion)
	}
}

// FuzzDecodeRegisterBody feeds both registration body forms: JSON (as 4.9
// and 5.x brokers send it) and compressed (RegisterBrokerBody.encode(true)).
func FuzzDecodeRegisterBody(f *testing.F) {
	f.Add([]byte(`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1},"topicConfigTable":{"T":{"topicName":"T"}}}}`))
	f.Add([]byte(`{0:{1:"x"}}`))
	f.Add(compressedBody(f, `{"counter":3,"stateVersion":1,"timestamp":9}`,
		[]string{`T 8 4 6 SINGLE_TAG {"+message.type":"NORMAL"}`, `%RETRY%g 1 1 6 SINGLE_TAG {}`}, `[]`))
	f.Add(compressedBody(f, `{}`, nil, `[]`))
	if b, err := os.ReadFile("testdata/apache-5.3.3-register-compressed.bin"); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		_, _ = DecodeRegisterBody(b, 409) // must not panic
		_ = config.QuoteBareKeys(b)
		rb, err := DecodeCompressedRegisterBody(b, 1<<20)
		if err == nil && rb.TopicConfigSerializeWrapper.TopicConfigTable == nil {
			t.Fatal("decoded without a topic table")
		}
	})
}

// The name server's cost of one registration of 100,000 topics: decoding the
// body and updating the route table (first registration, then a repeat with
// the same data version, as split parts and periodic ones are).
func BenchmarkRegister100k(b *testing.B) {
	const n = 100_000
	var js bytes.Buffer
	js.WriteString(`{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":1,"stateVersion":0,"timestamp":1},"topicConfigTable":{`)
	lines := make([]string, n)
	for i := 0; i < n; i++ {
		name := fmt.Sprintf("%%RETRY%%hostile-group-%06d", i)
		if i > 0 {
			js.WriteByte(',')
		}
		fmt.Fprintf(&js, `%q:{"attributes":{},"order":false,"perm":6,"readQueueNums":1,"topicFilterType":"SINGLE_TAG","topicName":%q,"topicSysFlag":0,"writeQueueNums":1}`, name, name)
		lines[i] = name + " 1 1 6 SINGLE_TAG {}"
	}
	js.WriteString("}}}")
	comp := compressedBody(b, `{"counter":1,"stateVersion":0,"timestamp":1}`, lines, `[]`)
	b.Logf("100,000 topics: JSON %d bytes, compressed %d bytes", js.Len(), len(comp))
	for _, tc := range []struct {
		name   string
		decode func() (RegisterBody, error)
	}{
		{"json", func() (RegisterBody, error) { return DecodeRegisterBody(js.Bytes(), 409) }},
		{"compressed", func() (RegisterBody, error) {
			return DecodeCompressedRegisterBody(comp, DefaultMaxRegisterBodyInflated)
		}},
	} {
		b.Run(tc.name, func(b *testing.B) {
			b.ReportAllocs()
			var rt *Routes
			for b.Loop() {
				rb, err := tc.decode()
				if err != nil {
					b.Fatal(err)
				}
				rt = NewRoutes(DefaultConfig())
				reg := Registration{ClusterName: "c", BrokerAddr: "127.0.0.1:10911", BrokerName: "b",
					DataVersion: rb.TopicConfigSerializeWrapper.DataVersion, Topics: rb.TopicConfigSerializeWrapper.TopicConfigTable}
				if _, err := rt.Register(reg, time.Now()); err != nil {
					b.Fatal(err)
				}
			}
			_ = rt
		})
	}
}
