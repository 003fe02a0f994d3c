package acl_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/acl"
	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/broker/tables"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/message"
	"github.com/rocketgo/rocketgo/processor"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}

// servedACL is the file of the served tests: one producer account.
const servedACL = `accounts:
  - accessKey: producerAK
    secretKey: producerSecret
    defaultTopicPerm: DENY
    topicPerms: [AclTopic=PUB]
  - accessKey: operatorAK
    secretKey: operatorSecret
    admin: true
`

// serve runs a broker (one event loop, no name server) whose table goes
// through the ACL interceptor when aclFile is not empty.
func serve(tb testing.TB, aclFile string) *broker.Broker {
	tb.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	ha, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	port, haPort := ln.Addr().(*net.TCPAddr).Port, ha.Addr().(*net.TCPAddr).Port
	_, _ = ln.Close(), ha.Close() // freed for the broker: ports picked by the kernel
	cfg := broker.DefaultConfig()
	cfg.BrokerName, cfg.BrokerIP1, cfg.BindAddress, cfg.ListenPort = "b", "127.0.0.1", "127.0.0.1", port
	cfg.HA.HAListenPort, cfg.FastListenPort, cfg.NamesrvAddr = haPort, -1, ""
	cfg.ServerWorkerThreads = 1
	cfg.Store.StorePathRootDir = tb.TempDir()
	cfg.Store.MappedFileSizeCommitLog = 64 << 20
	cfg.Store.AccessMessageInMemoryMaxRatio = 0
	log := testutil.Logger()
	b, err := broker.New(cfg, log)
	if err != nil {
		tb.Fatal(err)
	}
	if err := b.Topics.Put(tables.TopicConfig{TopicName: "AclTopic", ReadQueueNums: 1, WriteQueueNums: 1,
		Perm: message.PermRead | message.PermWrite}); err != nil {
		tb.Fatal(err)
	}
	var h remoting.Handler = processor.BrokerTable(processor.ServicesOf(b), log)
	if aclFile != "" {
		home := tb.TempDir()
		p := filepath.Join(home, "conf", "plain_acl.yml")
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			tb.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(aclFile), 0o644); err != nil {
			tb.Fatal(err)
		}
		f, err := acl.NewFiles(home, log)
		if err != nil {
			tb.Fatal(err)
		}
		t := processor.BrokerTable(processor.ServicesOf(b), log)
		processor.RegisterACL(t, f, b, log)
		h = t.Intercept(acl.NewInterceptor(f, log))
	}
	if err := b.Start(h); err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			tb.Errorf("shutdown: %v", err)
		}
	})
	return b
}

// sendReq is a SEND_MESSAGE_V2 as the clients send it, signed with sk
// (unsigned when ak is empty).
func sendReq(topic, ak, sk string) *remoting.Command {
	return acl.Signed(remoting.SendMessageV2, ak, sk, map[string]string{
		"a": "PG", "b": topic, "c": "TBW102", "d": "4", "e": "0", "f": "0", "g": "1700000000000", "h": "0",
		"i": "UNIQ_KEY\x017F0000011B2C18B4AAC27A5C1B2D0000\x02", "j": "0", "k": "false", "m": "false",
	}, make([]byte, 1024))
}

// The interceptor in a served broker: a refusal is Apache's answer and
// writes nothing; an allowed send is stored.
func TestInterceptorServed(t *testing.T) {
	t.Parallel()
	b := serve(t, servedACL)
	cl := remoting.NewClient(testutil.Logger())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	for _, tt := range []struct {
		name string
		req  *remoting.Command
		want string
	}{
		{"unsigned", sendReq("AclTopic", "", ""), "No accessKey is configured"},
		{"wrong secret", sendReq("AclTopic", "producerAK", "wrongSecret"), "Check signature failed for accessKey=producerAK"},
		{"unknown key", sendReq("AclTopic", "strangerAK", "producerSecret"), "No acl config for strangerAK"},
		{"no PUB", sendReq("OtherTopic", "producerAK", "producerSecret"), "No default permission for topic:OtherTopic"},
	} {
		resp, err := cl.Invoke(ctx, b.Config().Addr(), tt.req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Code != remoting.SystemError || !strings.HasPrefix(resp.Remark, "org.apache.rocketmq.acl.common.AclException: "+tt.want+", ") {
			t.Errorf("%s: code %d remark %q", tt.name, resp.Code, resp.Remark)
		}
	}
	if off := b.Store.MaxOffset("AclTopic", 0); off != 0 {
		t.Fatalf("refused sends wrote: max offset %d", off)
	}
	resp, err := cl.Invoke(ctx, b.Config().Addr(), sendReq("AclTopic", "producerAK", "producerSecret"))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Code != remoting.Success {
		t.Fatalf("signed send: code %d remark %q", resp.Code, resp.Remark)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return b.Store.MaxOffset("AclTopic", 0) == 1 })
}

// The admin codes through a served broker: only an admin may change the
// ACL; a created account works at once, a deleted one is refused at once;
// GET_BROKER_CLUSTER_ACL_INFO answers both versions' headers.
func TestAdminCodesServed(t *testing.T) {
	t.Parallel()
	b := serve(t, servedACL)
	cl := remoting.NewClient(testutil.Logger())
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	call := func(req *remoting.Command) *remoting.Command {
		t.Helper()
		resp, err := cl.Invoke(ctx, b.Config().Addr(), req)
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	create := map[string]string{"accessKey": "createdAK", "secretKey": "createdSecret", "admin": "false",
		"defaultTopicPerm": "DENY", "topicPerms": "AclTopic=PUB,Other=SUB"}
	if resp := call(acl.Signed(remoting.UpdateAndCreateACLConfig, "producerAK", "producerSecret", create, nil)); resp.Code != remoting.SystemError ||
		!strings.Contains(resp.Remark, "Need admin permission for request code=50, but accessKey=producerAK is not") {
		t.Fatalf("a user's update: %d %q", resp.Code, resp.Remark)
	}
	if resp := call(acl.Signed(remoting.UpdateGlobalWhiteAddrsConfig, "producerAK", "producerSecret",
		map[string]string{"globalWhiteAddrs": "*", "aclFileFullPath": ""}, nil)); resp.Code != remoting.SystemError {
		t.Fatalf("a user opened the broker: %d %q", resp.Code, resp.Remark)
	}
	if resp := call(sendReq("AclTopic", "createdAK", "createdSecret")); resp.Code != remoting.SystemError {
		t.Fatalf("send before the account exists: %d", resp.Code)
	}
	v0 := call(acl.Signed(remoting.GetBrokerClusterACLInfo, "operatorAK", "operatorSecret", nil, nil))
	if resp := call(acl.Signed(remoting.UpdateAndCreateACLConfig, "operatorAK", "operatorSecret", create, nil)); resp.Code != remoting.Success {
		t.Fatalf("admin's update: %d %q", resp.Code, resp.Remark)
	}
	if resp := call(sendReq("AclTopic", "createdAK", "createdSecret")); resp.Code != remoting.Success {
		t.Fatalf("send by the created account: %d %q", resp.Code, resp.Remark)
	}
	v1 := call(acl.Signed(remoting.GetBrokerClusterACLInfo, "operatorAK", "operatorSecret", nil, nil))
	if v1.Code != remoting.Success || v1.Str("brokerName") != "b" || v1.Str("brokerAddr") != b.Config().Addr() ||
		v1.Str("version") == v0.Str("version") || !strings.Contains(v1.Str("allAclFileVersion"), "plain_acl.yml") {
		t.Fatalf("acl info %v", v1.FieldMap())
	}
	if resp := call(acl.Signed(remoting.DeleteACLConfig, "operatorAK", "operatorSecret", map[string]string{"accessKey": "createdAK"}, nil)); resp.Code != remoting.Success {
		t.Fatalf("delete: %d %q", resp.Code, resp.Remark)
	}
	if resp := call(sendReq("AclTopic", "createdAK", "createdSecret")); resp.Code != remoting.SystemError ||
		!strings.Contains(resp.Remark, "No acl config for createdAK") {
		t.Fatalf("send by the deleted account: %d %q", resp.Code, resp.Remark)
	}
	if resp := call(acl.Signed(remoting.DeleteACLConfig, "operatorAK", "operatorSecret", map[string]string{"accessKey": "createdAK"}, nil)); resp.Code != 210 ||
		resp.Remark != "The accessKey[createdAK] corresponding to accessConfig has been deleted failed." {
		t.Fatalf("second delete: %d %q", resp.Code, resp.Remark)
	}
	short := map[string]string{"accessKey": "shortAK1", "secretKey": "abc"}
	if resp := call(acl.Signed(remoting.UpdateAndCreateACLConfig, "operatorAK", "operatorSecret", short, nil)); resp.Code != 209 ||
		!strings.Contains(resp.Remark, "length should longer than 6") {
		t.Fatalf("short secret: %d %q", resp.Code, resp.Remark)
	}
}

// BenchmarkSendServedACL is a signed 1 KiB SEND_MESSAGE_V2 over a socket,
// pipelined 64 at a time, with ACL off and on: the difference is ACL's
// cost per request.
func BenchmarkSendServedACL(b *testing.B) {
	for _, bc := range []struct {
		name string
		file string
	}{{"off", ""}, {"on", servedACL}} {
		b.Run(bc.name, func(b *testing.B) {
			br := serve(b, bc.file)
			nc, err := net.Dial("tcp", br.Config().Addr())
			if err != nil {
				b.Fatal(err)
			}
			defer nc.Close()
			const window = 64
			req := sendReq("AclTopic", "producerAK", "producerSecret")
			req.Serialize = remoting.RocketMQ
			var frames []byte
			for range window {
				frames = remoting.AppendFrame(frames, req)
			}
			in := make([]byte, 64<<10)
			testutil.Pipeline(b, nc, frames, window, in)
			b.ReportAllocs()
			b.SetBytes(int64(len(frames) / window))
			b.ResetTimer()
			for i := 0; i < b.N; i += window {
				testutil.Pipeline(b, nc, frames, window, in)
			}
		})
	}
}

// Without aclEnable the admin codes fail as Apache's do without a
// validator: 209/210/211 without a remark, 52 unanswered.
func TestAdminCodesDisabled(t *testing.T) {
	t.Parallel()
	tbl := remoting.Table{}
	processor.RegisterACL(tbl, nil, nil, testutil.Logger())
	for code, want := range map[int32]int32{remoting.UpdateAndCreateACLConfig: 209, remoting.DeleteACLConfig: 210} {
		resp := tbl[code](nil, remoting.NewRequest(code, map[string]string{"accessKey": "someKey1"}, nil))
		if resp == nil || resp.Code != want || resp.Remark != "" {
			t.Errorf("code %d: %+v, want %d", code, resp, want)
		}
	}
	resp := tbl[remoting.UpdateGlobalWhiteAddrsConfig](nil, remoting.NewRequest(remoting.UpdateGlobalWhiteAddrsConfig,
		map[string]string{"globalWhiteAddrs": "*", "aclFileFullPath": "/x.yml"}, nil))
	if resp == nil || resp.Code != 211 {
		t.Errorf("53: %+v", resp)
	}
	if resp := tbl[remoting.GetBrokerClusterACLInfo](nil, remoting.NewRequest(remoting.GetBrokerClusterACLInfo, nil, nil)); resp != nil {
		t.Errorf("52 answered: %+v", resp)
	}
}
