package message

import (
	"bytes"
	"errors"
	"maps"
	"net/netip"
	"reflect"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

func refJavaHash(s string) int32 {
	var h int32
	for _, u := range utf16.Encode([]rune(s)) {
		h = 31*h + int32(u)
	}
	return h
}

func TestTagsHash(t *testing.T) {
	t.Parallel()
	tests := []struct {
		tag  string
		want int64
	}{
		{"", 0},
		{"TagA", 2598919},
		{"a", 97},
		{"中", 20013},
		{"😀", 31*0xD83D + 0xDE00},
		{"TagA||TagB", int64(refJavaHash("TagA||TagB"))},
		{strings.Repeat("overflow", 20), int64(refJavaHash(strings.Repeat("overflow", 20)))},
	}
	for _, tt := range tests {
		if got := TagsHash(tt.tag); got != tt.want {
			t.Errorf("TagsHash(%q) = %d, want %d", tt.tag, got, tt.want)
		}
		if got := TagsHashBytes([]byte(tt.tag)); got != tt.want {
			t.Errorf("TagsHashBytes(%q) = %d, want %d", tt.tag, got, tt.want)
		}
	}
	// Negative hashes are sign-extended.
	for _, s := range []string{"zzzzzzzzzzzz", "RocketMQ-Tag-Negative?"} {
		if h := refJavaHash(s); int64(h) != TagsHash(s) {
			t.Errorf("TagsHash(%q) = %d, want %d", s, TagsHash(s), h)
		}
	}
}

func TestParseProperties(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name string
		in   string
		want map[string]string
	}{
		{"empty", "", map[string]string{}},
		{"two", "TAGS\x01TagA\x02KEYS\x01k1 k2\x02", map[string]string{"TAGS": "TagA", "KEYS": "k1 k2"}},
		{"no trailing separator", "a\x01b", map[string]string{"a": "b"}},
		{"empty name skipped", "\x01b\x02c\x01d\x02", map[string]string{"c": "d"}},
		{"empty value skipped", "a\x01\x02c\x01d\x02", map[string]string{"c": "d"}},
		{"no separator skipped", "abc\x02c\x01d\x02", map[string]string{"c": "d"}},
		{"value keeps later 0x01", "a\x01b\x01c\x02", map[string]string{"a": "b\x01c"}},
		{"last wins", "a\x01b\x02a\x01c\x02", map[string]string{"a": "c"}},
		{"short chunk", "a\x01\x02\x02\x02x\x01y", map[string]string{"x": "y"}},
		{"separator in next chunk", "ab\x02\x01cd\x02", map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseProperties(tt.in)
			if !maps.Equal(got, tt.want) {
				t.Fatalf("ParseProperties(%q) = %q, want %q", tt.in, got, tt.want)
			}
			for k, v := range tt.want {
				if p := Property(tt.in, k); p != v {
					t.Errorf("Property(%q) = %q, want %q", k, p, v)
				}
				if p := PropertyBytes([]byte(tt.in), k); string(p) != v {
					t.Errorf("PropertyBytes(%q) = %q, want %q", k, p, v)
				}
			}
			if p := Property(tt.in, "absent"); p != "" {
				t.Errorf("Property(absent) = %q", p)
			}
		})
	}
}

func TestAppendProperties(t *testing.T) {
	t.Parallel()
	got := AppendProperties(nil, map[string]string{"TAGS": "TagA", "KEYS": "k", "EMPTY": ""})
	want := "KEYS\x01k\x02TAGS\x01TagA\x02"
	if string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	if j := JoinProperties(nil, "a\x01b", "c\x01d\x02"); string(j) != "a\x01b\x02c\x01d\x02" {
		t.Fatalf("JoinProperties = %q", j)
	}
	if j := JoinProperties(nil, "a\x01b\x02", "c\x01d\x02"); string(j) != "a\x01b\x02c\x01d\x02" {
		t.Fatalf("JoinProperties = %q", j)
	}
}

func TestPropertyAllocs(t *testing.T) {
	props := "TAGS\x01TagA\x02KEYS\x01k1 k2\x02UNIQ_KEY\x017F0000010000000000000000000000AB\x02"
	b := []byte(props)
	n := testing.AllocsPerRun(100, func() {
		if Property(props, PropUniqClientMessageID) == "" || len(PropertyBytes(b, PropTags)) == 0 {
			t.Fatal("missing")
		}
	})
	if n != 0 {
		t.Fatalf("allocs = %v", n)
	}
}

func TestOffsetMsgID(t *testing.T) {
	t.Parallel()
	host := netip.MustParseAddrPort("127.0.0.1:10911")
	id := OffsetMsgID(host, 0x1234)
	if id != "7F00000100002A9F0000000000001234" {
		t.Fatalf("id = %s", id)
	}
	a, off, err := DecodeOffsetMsgID(strings.ToLower(id))
	if err != nil || a != host || off != 0x1234 {
		t.Fatalf("decode = %v %d %v", a, off, err)
	}
	h6 := netip.MustParseAddrPort("[2001:db8::1]:10911")
	id6 := OffsetMsgID(h6, 1<<40)
	if len(id6) != 56 || id6 != "20010DB800000000000000000000000100002A9F0000010000000000" {
		t.Fatalf("id6 = %s", id6)
	}
	a, off, err = DecodeOffsetMsgID(id6)
	if err != nil || a != h6 || off != 1<<40 {
		t.Fatalf("decode6 = %v %d %v", a, off, err)
	}
	// Mapped IPv4 is written as IPv4.
	if id := OffsetMsgID(netip.MustParseAddrPort("[::ffff:127.0.0.1]:10911"), 0x1234); id != "7F00000100002A9F0000000000001234" {
		t.Fatalf("mapped id = %s", id)
	}
	for _, bad := range []string{"", "7F", "ZZ00000100002A9F0000000000001234", "7F000001FFFFFFFF0000000000001234"} {
		if _, _, err := DecodeOffsetMsgID(bad); !errors.Is(err, ErrBadMsgID) {
			t.Errorf("DecodeOffsetMsgID(%q) err = %v", bad, err)
		}
	}
}

func TestUniqIDGen(t *testing.T) {
	t.Parallel()
	g := NewUniqIDGen(netip.MustParseAddr("10.0.0.9"), 0x1234, 0x01020304)
	now := time.Date(2024, 3, 1, 0, 0, 1, 0, time.Local)
	id := g.Next(now)
	if id != "0A0000091234"+"01020304"+"000003E8"+"0000" {
		t.Fatalf("id = %s", id)
	}
	id2 := g.Next(now.Add(time.Millisecond))
	if id2 != "0A000009123401020304000003E90001" {
		t.Fatalf("id2 = %s", id2)
	}
	// Next month restarts the ms counter.
	id3 := g.Next(time.Date(2024, 4, 1, 0, 0, 0, 5_000_000, time.Local))
	if id3 != "0A000009123401020304000000050002" {
		t.Fatalf("id3 = %s", id3)
	}
}

// goldenRecord is a V1 record with IPv4 hosts: its fields, and its bytes
// built field by field from store.md §2.1 (testdata/record-v1-ipv4.hex).
func goldenRecord(t testing.TB) (Record, []byte) {
	r := Record{
		QueueID:                   3,
		Flag:                      7,
		QueueOffset:               42,
		PhysicalOffset:            4096,
		SysFlag:                   0,
		BornTimestamp:             1700000000000,
		BornHost:                  netip.MustParseAddrPort("10.0.0.9:54321"),
		StoreTimestamp:            1700000000123,
		StoreHost:                 netip.MustParseAddrPort("127.0.0.1:10911"),
		ReconsumeTimes:            1,
		PreparedTransactionOffset: 0,
		Body:                      []byte("hello"),
		Topic:                     "TopicTest",
		Properties:                "TAGS\x01TagA\x02",
	}
	return r, testutil.Vector(t, "testdata/record-v1-ipv4.hex")
}

func TestRecordGolden(t *testing.T) {
	t.Parallel()
	r, want := goldenRecord(t)
	if BodyCRC([]byte("hello")) != 0x3610A686 {
		t.Fatalf("crc = %#x", BodyCRC([]byte("hello")))
	}
	got, err := AppendRecord([]byte("prefix"), &r)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got[6:], want) || string(got[:6]) != "prefix" {
		t.Fatalf("encode:\n got %x\nwant %x", got[6:], want)
	}
	if n := r.EncodedSize(); n != len(want) {
		t.Fatalf("EncodedSize = %d", n)
	}
	dec, rest, err := DecodeRecord(append(want, 1, 2, 3))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(rest, []byte{1, 2, 3}) {
		t.Fatalf("rest = %x", rest)
	}
	r.BodyCRC = 0x3610A686
	if dec.Topic != r.Topic || dec.Properties != r.Properties || !bytes.Equal(dec.Body, r.Body) {
		t.Fatalf("decoded %+v", dec)
	}
	dec.Body, r.Body = nil, nil
	if !reflect.DeepEqual(dec, r) {
		t.Fatalf("decoded\n%+v\nwant\n%+v", dec, r)
	}
}

func TestRecordIPv6AndV2(t *testing.T) {
	t.Parallel()
	r := Record{
		QueueID:    1,
		BornHost:   netip.MustParseAddrPort("[2001:db8::9]:1234"),
		StoreHost:  netip.MustParseAddrPort("[2001:db8::1]:10911"),
		Body:       []byte{},
		Topic:      strings.Repeat("t", 200),
		Properties: "",
		SysFlag:    FlagCompressed,
	}
	b, err := AppendRecord(nil, &r)
	if err != nil {
		t.Fatal(err)
	}
	if len(b) != 91+24+1+200 {
		t.Fatalf("len = %d", len(b))
	}
	v, rest, err := DecodeRecordView(b)
	if err != nil || len(rest) != 0 {
		t.Fatal(err)
	}
	if v.Magic != MagicV2 || v.SysFlag != FlagCompressed|FlagBornHostV6|FlagStoreHostV6 || v.BornHost != r.BornHost || v.StoreHost != r.StoreHost || string(v.Topic) != r.Topic {
		t.Fatalf("view %+v", v)
	}
	if StoreTimestampPos(v.SysFlag) != 68 {
		t.Fatal("store ts pos")
	}
}

func TestDecodeRecordErrors(t *testing.T) {
	t.Parallel()
	_, good := goldenRecord(t)
	mut := func(f func(b []byte) []byte) []byte { return f(append([]byte(nil), good...)) }
	tests := []struct {
		name string
		in   []byte
		want error
	}{
		{"empty", nil, ErrShortBuffer},
		{"torn", good[:50], ErrShortBuffer},
		{"zeroed", make([]byte, 200), ErrBadMagic},
		{"blank", AppendBlank(nil, 100), ErrBlank},
		{"total too small", mut(func(b []byte) []byte { b[3] = 10; return b }), ErrCorrupt},
		{"total too big", mut(func(b []byte) []byte { b[3]++; return append(b, 0) }), ErrCorrupt},
		{"body len", mut(func(b []byte) []byte { b[87] = 0xFF; return b }), ErrCorrupt},
		{"topic len", mut(func(b []byte) []byte { b[93] = 0x7F; return b }), ErrCorrupt},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, _, err := DecodeRecord(tt.in); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
}

func TestRecordAllocs(t *testing.T) {
	r, want := goldenRecord(t)
	buf := make([]byte, 0, 256)
	n := testing.AllocsPerRun(100, func() {
		if _, err := AppendRecord(buf[:0], &r); err != nil {
			t.Fatal(err)
		}
		if _, _, err := DecodeRecordView(want); err != nil {
			t.Fatal(err)
		}
	})
	if n != 0 {
		t.Fatalf("allocs = %v", n)
	}
}

func TestBatch(t *testing.T) {
	t.Parallel()
	var body []byte
	body, _ = AppendBatchMessage(body, 1, []byte("a"), "TAGS\x01x\x02")
	body, _ = AppendBatchMessage(body, 2, nil, "")
	if golden := testutil.Vector(t, "testdata/batch.hex"); !bytes.Equal(body, golden) {
		t.Fatalf("batch\n got %x\nwant %x", body, golden)
	}
	var got []string
	err := DecodeBatch(body, func(flag int32, b, p []byte) error {
		got = append(got, string(rune('0'+flag))+":"+string(b)+":"+string(p))
		return nil
	})
	if err != nil || len(got) != 2 || got[0] != "1:a:TAGS\x01x\x02" || got[1] != "2::" {
		t.Fatalf("got %q, %v", got, err)
	}
	for i := 1; i < len(body); i++ {
		if i == 30 {
			continue
		}
		if err := DecodeBatch(body[:i], func(int32, []byte, []byte) error { return nil }); err == nil {
			t.Fatalf("prefix %d decoded", i)
		}
	}
	stop := errors.New("stop")
	if err := DecodeBatch(body, func(int32, []byte, []byte) error { return stop }); err != stop {
		t.Fatalf("err = %v", err)
	}
}

// Java clients send properties without the trailing 0x02; appending the
// broker's own pairs must still separate them.
func TestAppendPropertyAfterUnterminated(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"empty", "", "CLUSTER\x01c\x02"},
		{"terminated", "a\x011\x02", "a\x011\x02CLUSTER\x01c\x02"},
		{"unterminated (Java)", "a\x011", "a\x011\x02CLUSTER\x01c\x02"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := string(AppendProperty([]byte(tc.in), "CLUSTER", "c"))
			if got != tc.want {
				t.Fatalf("AppendProperty(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if v := Property(got, "a"); tc.in != "" && v != "1" {
				t.Fatalf("property a = %q after append", v)
			}
		})
	}
}

// TestConcurrentHashMapOrder: the orders in which Apache 5.5's tool printed
// java.util.Properties it filled (exportConfigs' broker configs: fourteen
// keys, a resize of the sixteen-bin table that reverses one bin).
func TestConcurrentHashMapOrder(t *testing.T) {
	keys := []string{"brokerClusterName", "brokerId", "brokerName", "brokerRole", "fileReservedTime", "flushDiskType", "maxMessageSize",
		"messageDelayLevel", "msgTraceTopicName", "slaveReadEnable", "traceOn", "traceTopicEnable", "autoCreateTopicEnable", "autoCreateSubscriptionGroup"}
	ConcurrentHashMapOrder(keys, 16, JavaHash)
	want := "brokerId traceOn flushDiskType msgTraceTopicName traceTopicEnable messageDelayLevel autoCreateTopicEnable brokerRole " +
		"slaveReadEnable fileReservedTime brokerClusterName brokerName maxMessageSize autoCreateSubscriptionGroup"
	if got := strings.Join(keys, " "); got != want {
		t.Fatalf("got  %s\nwant %s", got, want)
	}
}
