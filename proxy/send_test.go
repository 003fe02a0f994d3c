package proxy

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/rocketgo/rocketgo/message"
)

// buildProperties applies SendMessageActivity's checks with Apache's codes
// and writes the properties Apache's proxy writes.
func TestBuildProperties(t *testing.T) {
	s := &Server{cfg: DefaultConfig()}
	ctx := context.WithValue(context.Background(), metaKey{}, clientMeta{remote: "10.0.0.1:5555"})
	base := func() *v2.Message {
		return &v2.Message{Topic: &v2.Resource{Name: "T"}, Body: []byte("b"),
			SystemProperties: &v2.SystemProperties{MessageId: "ID1", MessageType: v2.MessageType_NORMAL}}
	}
	tag := func(s string) *string { return &s }
	for _, tc := range []struct {
		name string
		edit func(m *v2.Message)
		want v2.Code
	}{
		{"plain", func(*v2.Message) {}, v2.Code_OK},
		{"empty body", func(m *v2.Message) { m.Body = nil }, codeMessageBodyEmpty},
		{"body too large", func(m *v2.Message) { m.Body = make([]byte, 4<<20+1) }, v2.Code_MESSAGE_BODY_TOO_LARGE},
		{"no message id", func(m *v2.Message) { m.SystemProperties.MessageId = " " }, v2.Code_ILLEGAL_MESSAGE_ID},
		{"system property", func(m *v2.Message) { m.UserProperties = map[string]string{"TAGS": "x"} }, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY},
		{"control in key", func(m *v2.Message) { m.UserProperties = map[string]string{"a\x01": "x"} }, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY},
		{"control in value", func(m *v2.Message) { m.UserProperties = map[string]string{"a": "x\x02"} }, v2.Code_ILLEGAL_MESSAGE_PROPERTY_KEY},
		{"too many properties", func(m *v2.Message) {
			m.UserProperties = map[string]string{}
			for i := 0; i < 129; i++ {
				m.UserProperties[strings.Repeat("k", i+1)] = "v"
			}
		}, v2.Code_MESSAGE_PROPERTIES_TOO_LARGE},
		{"properties too large", func(m *v2.Message) { m.UserProperties = map[string]string{"k": strings.Repeat("v", 16<<10)} }, v2.Code_MESSAGE_PROPERTIES_TOO_LARGE},
		{"tag with bar", func(m *v2.Message) { m.SystemProperties.Tag = tag("a|b") }, v2.Code_ILLEGAL_MESSAGE_TAG},
		{"blank tag", func(m *v2.Message) { m.SystemProperties.Tag = tag("  ") }, v2.Code_ILLEGAL_MESSAGE_TAG},
		{"blank key", func(m *v2.Message) { m.SystemProperties.Keys = []string{" "} }, v2.Code_ILLEGAL_MESSAGE_KEY},
		{"blank group", func(m *v2.Message) { m.SystemProperties.MessageGroup = tag(" ") }, v2.Code_ILLEGAL_MESSAGE_GROUP},
		{"long group", func(m *v2.Message) { m.SystemProperties.MessageGroup = tag(strings.Repeat("g", 64)) }, v2.Code_ILLEGAL_MESSAGE_GROUP},
		{"delay too far", func(m *v2.Message) {
			m.SystemProperties.DeliveryTimestamp = timestamppb.New(time.Now().Add(25 * time.Hour))
		}, v2.Code_ILLEGAL_DELIVERY_TIME},
		{"recovery too long", func(m *v2.Message) {
			m.SystemProperties.MessageType = v2.MessageType_TRANSACTION
			m.SystemProperties.OrphanedTransactionRecoveryDuration = durationpb.New(2 * time.Hour)
		}, v2.Code_BAD_REQUEST},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := base()
			tc.edit(m)
			_, err := s.buildProperties(ctx, m, "T")
			if got := statusOf(err).GetCode(); got != tc.want {
				t.Fatalf("code %v (%v), want %v", got, err, tc.want)
			}
		})
	}

	m := base()
	m.SystemProperties.Tag = tag("TA")
	m.SystemProperties.Keys = []string{"k1", "k2"}
	m.SystemProperties.MessageGroup = tag("g1")
	m.SystemProperties.MessageType = v2.MessageType_TRANSACTION
	m.SystemProperties.OrphanedTransactionRecoveryDuration = durationpb.New(30 * time.Second)
	at := time.Now().Add(time.Hour).UnixMilli()
	m.SystemProperties.DeliveryTimestamp = timestamppb.New(time.UnixMilli(at))
	m.UserProperties = map[string]string{"u": "v"}
	props, err := s.buildProperties(ctx, m, "T")
	if err != nil {
		t.Fatal(err)
	}
	got := message.ParseProperties(props)
	for k, v := range map[string]string{
		"u": "v", "TAGS": "TA", "KEYS": "k1 k2", "UNIQ_KEY": "ID1", "TRAN_MSG": "true",
		"CHECK_IMMUNITY_TIME_IN_SECONDS": "30", "TIMER_DELIVER_MS": strconv.FormatInt(at, 10), "PGROUP": "T",
		"__SHARDINGKEY": "g1", "__BORNHOST": "10.0.0.1:5555", "RECONSUME_TIME": "0",
	} {
		if got[k] != v {
			t.Errorf("property %s = %q, want %q (all: %v)", k, got[k], v, got)
		}
	}
	if sysFlagOf(m) != message.TransactionPrep {
		t.Errorf("sysFlag %#x", sysFlagOf(m))
	}
}
