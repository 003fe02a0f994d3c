package auth

import (
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// BenchmarkCheck is the interceptor's decision for a signed 1 KiB
// SEND_MESSAGE_V2 (the fields the Java client sends): off is no
// interceptor (nothing runs), authn verifies the signature, authn+authz
// also matches the user's ACL (a prefix and a literal entry match, the
// sort runs).
func BenchmarkCheck(b *testing.B) {
	s, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	v := NewService(s)
	if err := v.CreateUser("", UserInfo{Username: "producer", Password: "producerSecret"}); err != nil {
		b.Fatal(err)
	}
	if err := v.CreateAcl("User:producer", AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{
		{Resource: "Topic:Bench*", Actions: []string{"Pub"}, Decision: "Allow"},
		{Resource: "Topic:BenchTopic", Actions: []string{"Pub", "Sub"}, Decision: "Allow"},
		{Resource: "Group:G", Actions: []string{"Sub"}, Decision: "Allow"},
	}}}}); err != nil {
		b.Fatal(err)
	}
	req := remoting.NewRequest(remoting.SendMessageV2, map[string]string{
		"a": "PG", "b": "BenchTopic", "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "1700000000000", "h": "0",
		"i": "UNIQ_KEY\x017F0000011B2C18B4AAC27A5C1B2D0000\x02", "j": "0", "k": "false", "m": "false",
	}, make([]byte, 1024))
	req.Version = 500
	req = signed("producer", "producerSecret", req.Code, req.FieldMap())
	req.Body = make([]byte, 1024)
	req.Set("Signature", "")
	req = resign(req, "producerSecret")
	for _, bc := range []struct {
		name string
		cfg  *Config
	}{{"off", nil}, {"authn", &Config{Authentication: true}}, {"authn+authz", &Config{Authentication: true, Authorization: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			if bc.cfg == nil {
				return // no interceptor installed: nothing to measure
			}
			in := NewInterceptor(s, *bc.cfg, zlog())
			if r := in.Check(req, peer); r != nil {
				b.Fatal(r.Remark)
			}
			b.ReportAllocs()
			b.SetBytes(int64(len(req.Body)))
			b.ResetTimer()
			for range b.N {
				if in.Check(req, peer) != nil {
					b.Fatal("refused")
				}
			}
		})
	}
}
