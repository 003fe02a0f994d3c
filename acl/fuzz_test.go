package acl

import (
	"net/netip"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// FuzzPlainFile: any file parses or fails cleanly; what parses decides
// any request without panicking.
func FuzzPlainFile(f *testing.F) {
	f.Add([]byte(sampleACL))
	f.Add([]byte("globalWhiteRemoteAddresses: ['192.168.0.{1,2}', '10.1-3.*.*', '::1']\n"))
	f.Add([]byte("accounts:\n  - accessKey: abcdefgh\n    secretKey: 12345678\n    topicPerms: [a=PUB, b==SUB]\n"))
	f.Add([]byte("a: &x [*x]\n"))
	req := signed(remoting.PullMessage, "RocketMQ", "12345678", map[string]string{"topic": "topicB", "consumerGroup": "groupB"}, nil)
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1024 { // larger files find nothing new and make the run slow (make test runs 200,000)
			return
		}
		pf, err := ParsePlainFile(data)
		if err != nil {
			return
		}
		r, _ := Merge([]*PlainFile{pf})
		for _, ip := range []string{"127.0.0.1", "192.168.0.1", "::1"} {
			_ = r.Check(req, netip.MustParseAddr(ip), nil)
		}
	})
}

// FuzzCheck: any frame, decoded, is decided without panicking; a refusal
// always has a remark.
func FuzzCheck(f *testing.F) {
	for _, name := range []string{"signed-send-v2.hex", "signed-pull-token.hex", "signed-heartbeat.hex"} {
		req := loadFrame(f, name)
		f.Add(remoting.AppendFrame(nil, req)[4:])
	}
	r := sampleRules(f)
	r.accounts["rocketgoAK"] = &Account{AccessKey: "rocketgoAK", secret: []byte("rocketgoSecret"), DefaultTopic: Pub | Sub, DefaultGroup: Sub}
	f.Fuzz(func(t *testing.T, frame []byte) {
		req, err := remoting.DecodeFrame(frame)
		if err != nil {
			return
		}
		if d := r.Check(req, netip.MustParseAddr("127.0.0.1"), nil); d != nil && d.Remark() == "" {
			t.Fatal("refusal without a remark")
		}
	})
}
