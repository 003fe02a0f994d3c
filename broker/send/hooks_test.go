package send

import (
	"encoding/base64"
	"errors"
	"net/netip"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/broker/stats"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/store"
	"github.com/rs/zerolog"
)

// testService is the send path with its tables and no store: what the
// hooks (schedule, retry) and the handle codec use.
type testService struct {
	*Service
	cfg    Config
	locks  *tables.Locks
	counts stats.Stats
}

func newTestService(t *testing.T) *testService {
	t.Helper()
	dir := t.TempDir()
	ts := &testService{cfg: Config{BrokerName: "b", BrokerIP1: "127.0.0.1", TimerWheelEnable: true, TimerMaxDelaySec: 3 * 24 * 3600,
		MaxTopicQueueNums: 1024, Permission: message.PermRead | message.PermWrite},
		locks: tables.NewLocks(tables.LockMaxLive)}
	ts.Service = New(Deps{Config: func() *Config { return &ts.cfg },
		Topics: tables.NewTopics(filepath.Join(dir, "topics.json"), 1024, func() {}, func() bool { return false }),
		Groups: tables.NewGroups(filepath.Join(dir, "subscriptionGroup.json"), 1024, func() bool { return true }),
		Locks:  ts.locks, DelayLevels: []int64{1000, 2000}, Counts: &ts.counts}, zerolog.Nop())
	return ts
}

var testHost = netip.MustParseAddrPort("127.0.0.1:1234")

func testMsg(topic, props string) *store.PutMessage {
	return &store.PutMessage{Topic: topic, Body: []byte("hello"), Properties: props, BornHost: testHost, StoreHost: testHost,
		BornTimestamp: time.Now().UnixMilli()}
}

func props(kv ...string) string { return message.SetProperties("", kv...) }

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func TestScheduleTransforms(t *testing.T) {
	b := newTestService(t)
	now := time.Now().UnixMilli()
	m := testMsg("T", props("DELAY", "7", "TIMER_DELAY_SEC", "5"))
	m.QueueID = 3
	if err := b.schedule(m, now); err != nil {
		t.Fatal(err)
	}
	pm := message.ParseProperties(m.Properties)
	if m.Topic != message.ScheduleTopic || m.QueueID != 1 || pm["DELAY"] != "2" || pm["REAL_TOPIC"] != "T" ||
		pm["REAL_QID"] != "3" || pm["TIMER_DELAY_SEC"] != "" {
		t.Errorf("level 7 of 2: topic=%s queue=%d props=%v", m.Topic, m.QueueID, pm)
	}
	// Precedence: DELAY_SEC, then DELAY_MS, then DELIVER_MS.
	m = testMsg("T", props("TIMER_DELIVER_MS", "1", "TIMER_DELAY_MS", "1500", "TIMER_DELAY_SEC", "3"))
	if err := b.schedule(m, now); err != nil {
		t.Fatal(err)
	}
	if m.Topic != message.TimerTopic || message.Property(m.Properties, "TIMER_OUT_MS") != itoa(now+3000) {
		t.Errorf("timer: topic=%s props=%q", m.Topic, m.Properties)
	}
	for _, tc := range []struct {
		name, props string
		want        error
	}{
		{"beyond max", props("TIMER_DELAY_SEC", itoa(3*24*3600+1)), ErrTimerIllegal},
		{"garbage", props("TIMER_DELIVER_MS", "soon"), ErrTimerIllegal},
		{"past delete", props("TIMER_DELIVER_MS", "1", "TIMER_DEL_UNIQKEY", "x"), ErrTimerIllegal},
		{"past", props("TIMER_DELIVER_MS", "1"), nil},
	} {
		m := testMsg("T", tc.props)
		if err := b.schedule(m, now); !errors.Is(err, tc.want) || (err == nil && m.Topic != "T") {
			t.Errorf("%s: err=%v topic=%s", tc.name, err, m.Topic)
		}
	}
	b.cfg.TimerWheelEnable = false
	if err := b.schedule(testMsg("T", props("TIMER_DELAY_SEC", "3")), now); !errors.Is(err, ErrTimerDisabled) {
		t.Errorf("disabled wheel: %v", err)
	}
}

func TestRetrySendRules(t *testing.T) {
	b := newTestService(t)
	sendTo := func(reconsume, max int32, hasMax bool) *store.PutMessage {
		t.Helper()
		m := testMsg("%RETRY%G", props("DELAY", "3"))
		m.ReconsumeTimes = reconsume
		if err := b.retrySend(m, "PG", max, hasMax); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if m := sendTo(16, 0, false); m.Topic != "%RETRY%G" {
		t.Errorf("reconsumeTimes 16 of the group's 16 went to %s", m.Topic)
	}
	if m := sendTo(17, 0, false); m.Topic != "%DLQ%G" || message.Property(m.Properties, "DELAY") != "-1" {
		t.Errorf("reconsumeTimes 17 > 16: topic %s props %q", m.Topic, m.Properties)
	}
	if m := sendTo(2, 1, true); m.Topic != "%DLQ%G" {
		t.Errorf("header maxReconsumeTimes 1: topic %s", m.Topic)
	}
	if tc, ok := b.d.Topics.Get("%DLQ%G"); !ok || tc.Perm != message.PermRead|message.PermWrite || tc.WriteQueueNums != 1 {
		t.Errorf("DLQ topic %+v %v", tc, ok)
	}
	b.locks.TryLock("G", "c", 1, []tables.MessageQueue{{Topic: "T", BrokerName: "b", QueueID: 0}}, time.Now())
	if m := sendTo(0, 0, false); m.Topic != "%DLQ%G" {
		t.Errorf("group with orderly locks: topic %s", m.Topic)
	}
	if err := b.retrySend(testMsg("%RETRY%nope", ""), "PG", 0, false); err != nil {
		t.Errorf("auto-created group: %v", err) // autoCreateSubscriptionGroup defaults to true
	}
}

func BenchmarkScheduleHookPlainSend(b *testing.B) {
	br := &Service{d: Deps{Config: func() *Config { return &Config{TimerWheelEnable: true} }, DelayLevels: []int64{1000}}}
	m := testMsg("T", props("KEYS", "k1", "TAGS", "TagA", "UNIQ_KEY", "7F0000010001000000000000000000AA", "WAIT", "true"))
	b.ReportAllocs()
	for b.Loop() {
		if err := br.schedule(m, 0); err != nil {
			b.Fatal(err)
		}
	}
}

// The handle decoder takes any text without panicking, and what
// recallHandle builds decodes to its parts.
func FuzzDecodeRecallHandle(f *testing.F) {
	p := props("TIMER_OUT_MS", "41", "REAL_TOPIC", "T")
	if got, ok := decodeRecallHandle(recallHandle("b", p, "U1")); !ok || got != (recallHandleV1{"T", "b", "42", "U1"}) {
		f.Fatalf("round trip: %+v %v", got, ok)
	}
	f.Add("v1 T b 123 U", "")
	f.Add("v1  b 1 U", "=")
	f.Add("v2 T b 1 U extra", "==")
	f.Fuzz(func(t *testing.T, raw, pad string) {
		if h, ok := decodeRecallHandle(base64.RawURLEncoding.EncodeToString([]byte(raw)) + pad); ok {
			if parts := strings.Split(raw, " "); parts[0] != "v1" || h.topic != parts[1] {
				t.Fatalf("%q decoded to %+v", raw, h)
			}
		}
		_, _ = decodeRecallHandle(raw)
	})
}

func BenchmarkCheckSendKnownTopic(b *testing.B) {
	cfg := &Config{Permission: message.PermRead | message.PermWrite}
	topics := tables.NewTopics("", 1024, func() {}, nil)
	br := &Service{d: Deps{Config: func() *Config { return cfg }, Topics: topics}}
	if err := topics.Put(tables.TopicConfig{TopicName: "BenchTopic_with_a_realistic_name-01", ReadQueueNums: 8,
		WriteQueueNums: 8, Perm: message.PermRead | message.PermWrite}); err != nil {
		b.Fatal(err)
	}
	r := Request{ProducerGroup: "PG", Topic: "BenchTopic_with_a_realistic_name-01", DefaultTopic: "TBW102",
		DefaultTopicQueueNums: 4, QueueID: 3, Producer: "127.0.0.1:1"}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := br.checkSend(cfg, &r); err != nil {
			b.Fatal(err)
		}
	}
}
