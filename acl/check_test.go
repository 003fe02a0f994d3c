package acl

import (
	"net/netip"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

func sampleRules(t testing.TB) *Rules {
	t.Helper()
	f, err := ParsePlainFile([]byte(sampleACL))
	if err != nil {
		t.Fatal(err)
	}
	r, _ := Merge([]*PlainFile{f})
	return r
}

// signed builds a request signed as the Java client signs it.
func signed(code int32, ak, secret string, ext map[string]string, body []byte) *remoting.Command {
	req := remoting.NewRequest(code, ext, body)
	if ak != "" {
		req.Set(fieldAccessKey, ak)
		req.Set(fieldSignature, string(Sign(nil, []byte(secret), req)))
	}
	return req
}

func TestCheck(t *testing.T) {
	t.Parallel()
	r := sampleRules(t)
	const ak, sk = "RocketMQ", "12345678"
	local := netip.MustParseAddr("127.0.0.1")
	hb := func(group, topic string) []byte {
		return []byte(`{"clientID":"c","consumerDataSet":[{"groupName":"` + group + `","subscriptionDataSet":[{"topic":"` + topic + `"}]}]}`)
	}
	tests := []struct {
		name string
		req  *remoting.Command
		ip   netip.Addr
		want string // "" allowed, else the remark
	}{
		{"no access key", remoting.NewRequest(remoting.SendMessageV2, map[string]string{"b": "topicB"}, nil), local,
			"org.apache.rocketmq.acl.common.AclException: No accessKey is configured, org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:602)"},
		{"unknown key", signed(remoting.SendMessageV2, "Nobody123", sk, map[string]string{"b": "topicB"}, nil), local,
			"org.apache.rocketmq.acl.common.AclException: No acl config for Nobody123, org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:606)"},
		{"wrong secret", signed(remoting.SendMessageV2, ak, "87654321", map[string]string{"b": "topicB"}, []byte("x")), local,
			"org.apache.rocketmq.acl.common.AclException: Check signature failed for accessKey=RocketMQ, org.apache.rocketmq.acl.plain.PlainPermissionManager.validate(PlainPermissionManager.java:622)"},
		{"send PUB|SUB topic", signed(remoting.SendMessageV2, ak, sk, map[string]string{"b": "topicB"}, []byte("x")), local, ""},
		{"send SUB topic", signed(remoting.SendMessage, ak, sk, map[string]string{"topic": "topicC"}, nil), local,
			"org.apache.rocketmq.acl.common.AclException: No permission for topic:topicC, org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:62)"},
		{"send default DENY", signed(remoting.SendBatchMessage, ak, sk, map[string]string{"b": "topicD"}, nil), local,
			"org.apache.rocketmq.acl.common.AclException: No default permission for topic:topicD, org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:57)"},
		{"send retry topic needs the group's SUB", signed(remoting.SendMessageV2, ak, sk, map[string]string{"b": "%RETRY%groupC"}, nil), local, ""},
		{"send trace topic", signed(remoting.SendMessageV2, ak, sk, map[string]string{"b": "RMQ_SYS_TRACE_TOPIC"}, nil), local, ""},
		{"pull allowed", signed(remoting.PullMessage, ak, sk, map[string]string{"topic": "topicC", "consumerGroup": "groupC"}, nil), local, ""},
		{"pull denied group", signed(remoting.PullMessage, ak, sk, map[string]string{"topic": "topicC", "consumerGroup": "groupA"}, nil), local,
			"org.apache.rocketmq.acl.common.AclException: No permission for group:groupA, org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:62)"},
		{"pull default group SUB", signed(remoting.PullMessage, ak, sk, map[string]string{"topic": "topicB", "consumerGroup": "groupZ"}, nil), local, ""},
		{"offset update", signed(remoting.UpdateConsumerOffset, ak, sk, map[string]string{"topic": "topicA", "consumerGroup": "groupC"}, nil), local,
			"org.apache.rocketmq.acl.common.AclException: No permission for topic:topicA, org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:62)"},
		{"heartbeat allowed", signed(remoting.HeartBeat, ak, sk, nil, hb("groupC", "topicC")), local, ""},
		{"heartbeat denied topic", signed(remoting.HeartBeat, ak, sk, nil, hb("groupC", "topicA")), local,
			"org.apache.rocketmq.acl.common.AclException: No permission for topic:topicA, org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:62)"},
		{"heartbeat bad body", signed(remoting.HeartBeat, ak, sk, nil, []byte("{")), local, "PlainAccessResource.parse(PlainAccessResource.java:174)"},
		{"admin code, not admin", signed(remoting.UpdateAndCreateTopic, ak, sk, map[string]string{"topic": "t"}, nil), local,
			"org.apache.rocketmq.acl.common.AclException: Need admin permission for request code=17, but accessKey=RocketMQ is not, org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:36)"},
		{"broker config, not admin", signed(remoting.UpdateBrokerConfig, ak, sk, nil, []byte("aclEnable=false\n")), local,
			"org.apache.rocketmq.acl.common.AclException: Need admin permission for request code=25, but accessKey=RocketMQ is not, org.apache.rocketmq.acl.plain.PlainPermissionChecker.check(PlainPermissionChecker.java:36)"},
		{"broker config, admin", signed(remoting.UpdateBrokerConfig, "rocketmq2", sk, nil, []byte("aclEnable=false\n")), local, ""},
		{"other code, signed", signed(remoting.GetConsumerListByGroup, ak, sk, map[string]string{"consumerGroup": "groupB"}, nil), local, ""},
		{"global white, unsigned", remoting.NewRequest(remoting.DeleteTopicInBroker, map[string]string{"topic": "t"}, nil), netip.MustParseAddr("10.10.103.9"), ""},
		{"account white, bad signature", signed(remoting.DeleteTopicInBroker, "rocketmq2", "wrong-secret", nil, nil), netip.MustParseAddr("192.168.1.9"), ""},
		{"admin outside its white address, signed", signed(remoting.DeleteTopicInBroker, "rocketmq2", sk, nil, nil), local, ""},
		{"admin outside its white address, unsigned", signed(remoting.DeleteTopicInBroker, "rocketmq2", "wrong-secret", nil, nil), local,
			"Check signature failed for accessKey=rocketmq2"},
	}
	for _, tt := range tests {
		d := r.Check(tt.req, tt.ip, nil)
		switch {
		case tt.want == "" && d != nil:
			t.Errorf("%s: refused: %s", tt.name, d.Remark())
		case tt.want != "" && d == nil:
			t.Errorf("%s: allowed", tt.name)
		case d != nil && !strings.Contains(d.Remark(), tt.want):
			t.Errorf("%s: remark\n%s\nwant\n%s", tt.name, d.Remark(), tt.want)
		}
	}
}

// The first refusal Apache reports follows java.util.HashMap's order.
func TestJavaOrder(t *testing.T) {
	t.Parallel()
	ns := []need{{"%RETRY%GID_x", Sub}, {"TopicZ", Sub}} // Java iterates [TopicZ, %RETRY%GID_x]
	javaOrder(ns)
	if ns[0].res != "TopicZ" {
		t.Fatalf("order %v", ns)
	}
	if javaHash("abc") != 96354 || javaHash("Hello") != 69609650 {
		t.Fatalf("String.hashCode differs")
	}
}

func BenchmarkCheck(b *testing.B) {
	r := sampleRules(b)
	body := make([]byte, 1024)
	req := signed(remoting.SendMessageV2, "RocketMQ", "12345678", map[string]string{"a": "PID", "b": "topicB", "c": "TBW102",
		"d": "4", "e": "0", "f": "0", "g": "1764547200000", "h": "0", "i": "UNIQ_KEY\x01ABC", "j": "0", "k": "false", "m": "false"}, body)
	ip := netip.MustParseAddr("127.0.0.1")
	var scratch [8]need
	b.ReportAllocs()
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		if d := r.Check(req, ip, scratch[:0]); d != nil {
			b.Fatal(d)
		}
	}
}
