package compattest

// ACL 2.0 over gRPC: mqbroker --enable-proxy with the auth2
// keys. The Go v5 SDK signs every call (the `authorization` metadata over
// `x-mq-date-time`); the in-process proxy checks it as Apache's proxy does
// and answers a refusal with Code UNAUTHORIZED and Apache's message.

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	rmq "github.com/apache/rocketmq-clients/golang/v5"
	"github.com/apache/rocketmq-clients/golang/v5/credentials"
)

func TestAuth2LocalProxy(t *testing.T) {
	t.Parallel()
	quietSDK()
	c := newClusterConf(t, "auth2-proxy", auth2Keys)
	auth2Setup(t, c)
	port, err := pickPort()
	if err != nil {
		t.Fatal(err)
	}
	conf := filepath.Join(c.dir, "rmq-proxy.json")
	body := fmt.Sprintf(`{"rocketMQClusterName":%q,"namesrvAddr":%q,"grpcServerPort":%d}`, clusterName, c.nsAddr, port)
	if err := os.WriteFile(conf, []byte(body), 0o644); err != nil {
		t.Fatal(err)
	}
	pp := startLocalProxy(t, c, &proxyProc{addr: fmt.Sprintf("127.0.0.1:%d", port), args: []string{"-pc", conf}})
	auth2GRPCScenario(t, pp)
}

// TestAuth2ClusterProxy: the same through mqproxy (cluster mode) with
// ACL 2.0 in rmq-proxy.json: the users and ACLs are read from the broker,
// and the proxy signs its calls with the inner credentials. Not compared
// with Apache's proxy: with the same keys (and its metadata providers
// named) its start-up creates system topics with an unsigned admin call,
// and with that let through, its user lookups still fail ("Authentication
// failed. Please verify the credentials and try again.").
func TestAuth2ClusterProxy(t *testing.T) {
	if proxyImpl() != "rocketgo" {
		t.Skip("mqproxy's own ACL 2.0 (local mode: TestAuth2LocalProxy)")
	}
	t.Parallel()
	c := newClusterConf(t, "auth2-mqproxy", auth2Keys)
	auth2Setup(t, c)
	keys := `,"authenticationEnabled":true,"authorizationEnabled":true,` +
		`"innerClientAuthenticationCredentials":"{\"accessKey\":\"rocketmq2\",\"secretKey\":\"superPass1\"}"`
	auth2GRPCScenario(t, startProxy(t, c, keys))

	// authorizationWhitelist names the SDK's request messages: through a
	// proxy that skips authorization of routes and sends, the send the
	// scenario saw refused (AuthTDeny) goes through.
	pp := startProxy(t, c, keys+`,"authorizationWhitelist":"apache.rocketmq.v2.QueryRouteRequest, apache.rocketmq.v2.SendMessageRequest"`)
	p, err := rmq.NewProducer(&rmq.Config{Endpoint: pp.addr, Credentials: &credentials.SessionCredentials{
		AccessKey: auth2Alice.AccessKey, AccessSecret: auth2Alice.SecretKey}}, rmq.WithTopics("AuthTopic"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer through the whitelisting proxy: %v", err)
	}
	defer func() { _ = p.GracefulStop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := p.Send(ctx, &rmq.Message{Topic: "AuthTDeny", Body: []byte("x")}); err != nil {
		t.Errorf("send to AuthTDeny with SendMessageRequest whitelisted: %v", err)
	}
}

// auth2GRPCScenario: the Go v5 SDK as authAlice sends to AuthTopic and
// receives it in AuthGroup; a send to AuthTDeny and a wrong password are
// refused with Apache's messages.
func auth2GRPCScenario(t *testing.T, pp *proxyProc) {
	cfgAs := func(cred credentials.SessionCredentials) *rmq.Config {
		return &rmq.Config{Endpoint: pp.addr, Credentials: &cred}
	}
	alice := credentials.SessionCredentials{AccessKey: auth2Alice.AccessKey, AccessSecret: auth2Alice.SecretKey}

	p, err := rmq.NewProducer(cfgAs(alice), rmq.WithTopics("AuthTopic"))
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Start(); err != nil {
		t.Fatalf("producer as the user: %v", err)
	}
	defer func() { _ = p.GracefulStop() }()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	id := uniq("auth2-grpc")
	m := &rmq.Message{Topic: "AuthTopic", Body: []byte(id)}
	m.AddProperty(idProp, id)
	if _, err := p.Send(ctx, m); err != nil {
		t.Fatalf("send as the user: %v", err)
	}
	_, err = p.Send(ctx, &rmq.Message{Topic: "AuthTDeny", Body: []byte("x")})
	if err == nil || !strings.Contains(err.Error(), "User:authAlice has no permission to access Topic:AuthTDeny from 127.0.0.1, the decision is deny.") {
		t.Errorf("send to a denied topic: %v", err)
	}

	bad, err := rmq.NewProducer(cfgAs(credentials.SessionCredentials{AccessKey: auth2Alice.AccessKey, AccessSecret: "wrongPass1"}),
		rmq.WithTopics("AuthTopic"))
	if err != nil {
		t.Fatal(err)
	}
	err = bad.Start()
	if err == nil {
		_, err = bad.Send(ctx, &rmq.Message{Topic: "AuthTopic", Body: []byte("x")})
		_ = bad.GracefulStop()
	}
	if err == nil || !strings.Contains(err.Error(), "check signature failed.") {
		t.Errorf("wrong password: %v", err)
	}

	cfg := cfgAs(alice)
	cfg.ConsumerGroup = "AuthGroup"
	sc, err := rmq.NewSimpleConsumer(cfg, rmq.WithAwaitDuration(5*time.Second),
		rmq.WithSubscriptionExpressions(map[string]*rmq.FilterExpression{"AuthTopic": rmq.SUB_ALL}))
	if err != nil {
		t.Fatal(err)
	}
	if err := sc.Start(); err != nil {
		t.Fatalf("simple consumer as the user: %v", err)
	}
	defer func() { _ = sc.GracefulStop() }()
	deadline := time.Now().Add(45 * time.Second)
	for time.Now().Before(deadline) {
		rctx, rcancel := context.WithTimeout(ctx, 15*time.Second)
		mvs, err := sc.Receive(rctx, 16, 20*time.Second)
		rcancel()
		for _, mv := range mvs {
			_ = sc.Ack(ctx, mv)
			if mv.GetProperties()[idProp] == id {
				return
			}
		}
		if err != nil && strings.Contains(err.Error(), "UNAUTHORIZED") {
			t.Fatalf("receive as the user: %v", err)
		}
	}
	t.Fatalf("message %s not received through the proxy as the user", id)
}
