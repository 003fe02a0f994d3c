package auth_test

import (
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/auth"
	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/processor"
	"github.com/rocketgo/rocketgo/remoting"
	"github.com/rocketgo/rocketgo/store"
)

func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}

// serve runs a broker (no name server) with ACL 2.0 on and the admin
// codes, the super user root/rootPass1.
func serve(t *testing.T) *broker.Broker {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ha, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port, haPort := ln.Addr().(*net.TCPAddr).Port, ha.Addr().(*net.TCPAddr).Port
	_, _ = ln.Close(), ha.Close()
	cfg := broker.DefaultConfig()
	cfg.BrokerName, cfg.BrokerIP1, cfg.BindAddress, cfg.ListenPort = "b", "127.0.0.1", "127.0.0.1", port
	cfg.HA.HAListenPort, cfg.FastListenPort, cfg.NamesrvAddr = haPort, -1, ""
	cfg.ServerWorkerThreads = 1
	cfg.Store.StorePathRootDir = t.TempDir()
	cfg.Store.MappedFileSizeCommitLog = 1 << 20
	log := testutil.Logger()
	b, err := broker.New(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	st, err := auth.OpenStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	svc := auth.NewService(st)
	if err := svc.EnsureSuper("root", "rootPass1"); err != nil {
		t.Fatal(err)
	}
	tbl := processor.BrokerTable(processor.ServicesOf(b), log)
	processor.RegisterAuth(tbl, svc, b, log)
	if err := b.Start(tbl.Intercept(auth.NewInterceptor(st, auth.Config{Authentication: true, Authorization: true, Cluster: "C"}, log))); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := b.Shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return b
}

// TestAdminCodesHostile: bodies and headers no client sends are answered
// (an error code and a remark), never a panic or a hang, and change
// nothing; a good edit after them is served.
func TestAdminCodesHostile(t *testing.T) {
	t.Parallel()
	b := serve(t)
	cl := remoting.NewClient(testutil.Logger())
	defer cl.Close()
	call := func(code int32, ext map[string]string, body string) *remoting.Command {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		req := remoting.NewRequest(code, ext, []byte(body))
		req.Set("AccessKey", "root")
		auth.Resign(req, "rootPass1")
		resp, err := cl.Invoke(ctx, b.Config().Addr(), req)
		if err != nil {
			t.Fatalf("code %d: %v", code, err)
		}
		return resp
	}
	deep := strings.Repeat("[", 100_000) + strings.Repeat("]", 100_000)
	for _, c := range []struct {
		code int32
		ext  map[string]string
		body string
		want int32
	}{
		{3001, map[string]string{"username": "u1"}, "", remoting.SystemError},
		{3001, map[string]string{"username": "u1"}, "{", remoting.SystemError},
		{3001, map[string]string{"username": "u1"}, `{"password":123}`, remoting.SystemError},
		{3001, map[string]string{"username": "u1"}, deep, remoting.SystemError},
		{3001, nil, `{"password":"p"}`, remoting.InvalidParameter},
		{3006, map[string]string{"subject": "User:root"}, "null", remoting.SystemError},
		{3006, map[string]string{"subject": "User:root"}, `{"policies":[{"entries":[{"resource":"Topic:t","actions":"Pub"}]}]}`, remoting.SystemError},
		{3006, map[string]string{"subject": "nosuchtype:x"}, `{"policies":[{"entries":[{"resource":"Topic:t","actions":["Pub"],"decision":"Allow"}]}]}`, remoting.SystemError},
		{3006, map[string]string{"subject": "User:root"}, `{"policies":[{"entries":[{"resource":"Bogus:t","actions":["Pub"],"decision":"Allow"}]}]}`, remoting.NoPermission},
		{3008, map[string]string{}, "", remoting.NoPermission},
		{3009, map[string]string{}, "", remoting.SystemError},
		{3004, map[string]string{"username": " "}, "", remoting.InvalidParameter},
	} {
		if resp := call(c.code, c.ext, c.body); resp.Code != c.want || resp.Remark == "" {
			t.Errorf("code %d %v %.40q: %d %q, want %d", c.code, c.ext, c.body, resp.Code, resp.Remark, c.want)
		}
	}
	if resp := call(3005, nil, ""); resp.Code != 0 || strings.Contains(string(resp.Body), "u1") {
		t.Fatalf("a refused edit left a user: %d %s", resp.Code, resp.Body)
	}
	if resp := call(3001, map[string]string{"username": "u1"}, `{"password":"p1"}`); resp.Code != 0 {
		t.Fatalf("good create after the hostile ones: %d %q", resp.Code, resp.Remark)
	}
	if resp := call(3004, map[string]string{"username": "u1"}, ""); resp.Code != 0 ||
		string(resp.Body) != `{"username":"u1","password":"p1","userType":"Normal","userStatus":"enable"}` {
		t.Fatalf("get user: %d %s", resp.Code, resp.Body)
	}
}
