package remoting

import (
	"bytes"
	"reflect"
	"testing"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

func TestJSONFrameGolden(t *testing.T) {
	c := &Command{Code: 105, Language: LangJava, Version: 409, Opaque: 7, Flag: 0,
		ExtFields: Fields(map[string]string{"topic": "T\x01x"})}
	got := AppendFrame(nil, c)
	if want := testutil.Vector(t, "testdata/frame-json.hex"); !bytes.Equal(got, want) {
		t.Fatalf("frame\n got %q\nwant %q", got, want)
	}
	dec, err := DecodeFrame(got[4:])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dec, c) {
		t.Fatalf("round trip: got %+v want %+v", dec, c)
	}
}

// A request exactly as the Go client writes it: struct order, remark "", all strings.
func TestDecodeGoClientHeader(t *testing.T) {
	h := `{"code":34,"language":"GO","version":317,"opaque":5,"flag":0,"remark":"","extFields":{"a":"1"}}`
	frame := append([]byte{0, 0, 0, byte(len(h))}, h...)
	frame = append(frame, "body"...)
	c, err := DecodeFrame(frame)
	if err != nil {
		t.Fatal(err)
	}
	want := &Command{Code: 34, Language: LangGo, Version: 317, Opaque: 5, ExtFields: Fields(map[string]string{"a": "1"}),
		Body: []byte("body")}
	if !reflect.DeepEqual(c, want) {
		t.Fatalf("got %+v want %+v", c, want)
	}
}

func TestDecodeJSONLenient(t *testing.T) {
	for _, h := range []string{
		`{"code":1,"remark":null,"extFields":null,"opaque":-3}`,
		`{"opaque":-3,"code":1,"unknown":{"x":[1,2]},"serializeTypeCurrentRPC":"JSON"}`,
		`{"code":1,"opaque":-3,"extFields":{"n":12,"b":true,"z":null}}`,
	} {
		c, err := DecodeFrame(append([]byte{0, 0, 0, byte(len(h))}, h...))
		if err != nil {
			t.Fatalf("%s: %v", h, err)
		}
		if c.Code != 1 || c.Opaque != -3 {
			t.Fatalf("%s: got %+v", h, c)
		}
		if n, ok := c.Lookup("n"); ok && (n != "12" || c.Str("b") != "true") {
			t.Fatalf("%s: ext %v", h, c.ExtFields)
		}
	}
}

func TestBinaryFrameGolden(t *testing.T) {
	c := &Command{Code: 11, Language: LangGo, Version: 317, Opaque: 258, Flag: 1, Remark: "hi",
		ExtFields: Fields(map[string]string{"k": "vv"}), Body: []byte{0xAB}, Serialize: RocketMQ}
	got := AppendFrame(nil, c)
	if want := testutil.Vector(t, "testdata/frame-binary.hex"); !bytes.Equal(got, want) {
		t.Fatalf("frame\n got %x\nwant %x", got, want)
	}
	dec, err := DecodeFrame(got[4:])
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(dec, c) {
		t.Fatalf("round trip: got %+v want %+v", dec, c)
	}
}

func TestDecodeFrameErrors(t *testing.T) {
	for name, frame := range map[string][]byte{
		"short":            {0, 0},
		"header too long":  {0, 0, 0, 9, '{', '}'},
		"unknown type":     {5, 0, 0, 2, '{', '}'},
		"bad json":         append([]byte{0, 0, 0, 5}, `{"cod`...),
		"json not object":  append([]byte{0, 0, 0, 2}, `[]`...),
		"binary truncated": {1, 0, 0, 3, 0, 1, 2},
		"binary remark":    append([]byte{1, 0, 0, 21}, make([]byte, 13)[:13]...),
	} {
		if name == "binary remark" {
			frame = append([]byte{1, 0, 0, 21}, append(make([]byte, 13), 0x7f, 0, 0, 0, 0, 0, 0, 0)...)
		}
		if _, err := DecodeFrame(frame); err == nil {
			t.Errorf("%s: want error", name)
		}
	}
}

func TestAppendJSONString(t *testing.T) {
	got := string(AppendJSONString(nil, "a\"b\\c\n\x02é\xff"))
	if want := `"a\"b\\c\n\u0002é` + "\ufffd" + `"`; got != want {
		t.Fatalf("got %s want %s", got, want)
	}
}

func TestEncodeAllocs(t *testing.T) {
	c := &Command{Code: 0, Opaque: 1, Flag: 1, ExtFields: Fields(map[string]string{"msgId": "X", "queueId": "1"})}
	buf := make([]byte, 0, 512)
	if n := testing.AllocsPerRun(100, func() { buf = AppendFrame(buf[:0], c) }); n != 0 {
		t.Fatalf("AppendFrame allocates %v times", n)
	}
}
