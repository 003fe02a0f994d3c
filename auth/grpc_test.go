package auth

import (
	"crypto/hmac"
	"crypto/sha1"
	"encoding/hex"
	"testing"

	v2 "github.com/rocketgo/rocketgo/apis/v2"
	"google.golang.org/grpc/metadata"
)

// sdkMD is the metadata the 5.x SDKs send: the hex HMAC-SHA1 of the
// date-time under the secret.
func sdkMD(user, secret, dt string) metadata.MD {
	m := hmac.New(sha1.New, []byte(secret))
	m.Write([]byte(dt))
	return metadata.Pairs(mdDateTime, dt, mdAuthorization,
		"MQv2-HMAC-SHA1 Credential="+user+", SignedHeaders=x-mq-date-time, Signature="+hex.EncodeToString(m.Sum(nil)))
}

func TestGRPC(t *testing.T) {
	s, v := newTestStore(t)
	must(t, v.CreateUser("", UserInfo{Username: "alice", Password: "secret12"}))
	must(t, v.CreateAcl("User:alice", AclInfo{Policies: []PolicyInfo{{Entries: []PolicyEntryInfo{
		{Resource: "Topic:T", Actions: []string{"Pub"}, Decision: "Allow"},
		{Resource: "Group:G", Actions: []string{"Sub"}, Decision: "Allow"},
	}}}}))
	g := NewGRPC(s, Config{Authentication: true, Authorization: true})
	const dt = "20261201T203000Z"
	send := func(topic string) *v2.SendMessageRequest {
		return &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: topic}}}}
	}
	for _, c := range []struct {
		name string
		md   metadata.MD
		req  any
		want string
	}{
		{"good", sdkMD("alice", "secret12", dt), send("T"), ""},
		{"wrong secret", sdkMD("alice", "nope", dt), send("T"), "check signature failed."},
		{"unknown", sdkMD("bob", "secret12", dt), send("T"), "User:bob is not found."},
		{"no header", metadata.MD{}, send("T"), "username cannot be null."},
		{"no date", metadata.Pairs(mdAuthorization, "x y"), send("T"), "datetime is null."},
		{"bad header", metadata.Pairs(mdAuthorization, "x", mdDateTime, dt), send("T"), "authentication header is incorrect."},
		{"bad hex", metadata.Pairs(mdAuthorization, "x Credential=alice, Signature=zz", mdDateTime, dt), send("T"), "create authentication context error."},
		{"other topic", sdkMD("alice", "secret12", dt), send("U"),
			"User:alice has no permission to access Topic:U from 10.1.2.3, no matched policies."},
		{"no message", sdkMD("alice", "secret12", dt), &v2.SendMessageRequest{}, "message is null."},
		{"producer heartbeat", sdkMD("alice", "secret12", dt), &v2.HeartbeatRequest{ClientType: v2.ClientType_PRODUCER}, ""},
		{"receive", sdkMD("alice", "secret12", dt), &v2.ReceiveMessageRequest{Group: &v2.Resource{Name: "G"},
			MessageQueue: &v2.MessageQueue{Topic: &v2.Resource{Name: "T"}}},
			"User:alice has no permission to access Topic:T from 10.1.2.3, no matched policies."}, // Pub only
		{"settings", sdkMD("alice", "secret12", dt), &v2.TelemetryCommand{Command: &v2.TelemetryCommand_Settings{Settings: &v2.Settings{
			PubSub: &v2.Settings_Publishing{Publishing: &v2.Publishing{Topics: []*v2.Resource{{Name: "T"}}}}}}}, ""},
	} {
		got := ""
		if r := g.Check(c.md, peer, c.req); r != nil {
			got = r.Remark
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
}

// The whitelists name gRPC request messages: a listed message skips that
// step (Apache's strategies compare the message's full name); a code, or
// another message, does not.
func TestGRPCWhitelists(t *testing.T) {
	s, v := newTestStore(t)
	must(t, v.CreateUser("", UserInfo{Username: "alice", Password: "secret12"}))
	route := &v2.QueryRouteRequest{Topic: &v2.Resource{Name: "T"}}
	send := &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: "T"}}}}
	const dt = "20261201T203000Z"
	noPolicy := "User:alice has no permission to access Topic:T from 10.1.2.3, no matched policies."
	for _, c := range []struct {
		name string
		cfg  Config
		md   metadata.MD
		req  any
		want string
	}{
		{"authentication skipped, authorization not", Config{Authentication: true, Authorization: true,
			AuthenticationWhitelist: ParseWhitelist("apache.rocketmq.v2.QueryRouteRequest")}, metadata.MD{}, route,
			"Authorization failed. Please verify your access rights and try again."},
		{"both skipped", Config{Authentication: true, Authorization: true,
			AuthenticationWhitelist: ParseWhitelist(" apache.rocketmq.v2.QueryRouteRequest ,10"),
			AuthorizationWhitelist:  ParseWhitelist("apache.rocketmq.v2.QueryRouteRequest")}, metadata.MD{}, route, ""},
		{"another message", Config{Authentication: true, Authorization: true,
			AuthenticationWhitelist: ParseWhitelist("apache.rocketmq.v2.QueryRouteRequest"),
			AuthorizationWhitelist:  ParseWhitelist("apache.rocketmq.v2.QueryRouteRequest")}, metadata.MD{}, send,
			"username cannot be null."},
		{"a code is not a message", Config{Authentication: true, AuthenticationWhitelist: ParseWhitelist("310")},
			metadata.MD{}, send, "username cannot be null."},
		{"authorization skipped", Config{Authentication: true, Authorization: true,
			AuthorizationWhitelist: ParseWhitelist("apache.rocketmq.v2.SendMessageRequest")}, sdkMD("alice", "secret12", dt), send, ""},
		{"authorization not skipped", Config{Authentication: true, Authorization: true}, sdkMD("alice", "secret12", dt), send, noPolicy},
	} {
		got := ""
		if r := NewGRPC(s, c.cfg).Check(c.md, peer, c.req); r != nil {
			got = r.Remark
		}
		if got != c.want {
			t.Errorf("%s: %q, want %q", c.name, got, c.want)
		}
	}
	if w := ParseWhitelist("10, x ,"); !w.Code(10) || !w.Name("x") || w.Name("") || w.Code(11) {
		t.Errorf("ParseWhitelist: %+v", w)
	}
}

// TestRemote: a cluster proxy's directory fetches from the brokers, keeps
// what it found and asks again for what it did not.
func TestRemote(t *testing.T) {
	calls := map[int32]int{}
	users := map[string]string{}
	fetch := func(code int32, ext map[string]string) ([]byte, error) {
		calls[code]++
		switch code {
		case 3004:
			return []byte(users[ext["username"]]), nil
		case 3009:
			return []byte(`{"subject":"User:alice","policies":[{"policyType":"Custom","entries":[{"resource":"Topic:T","actions":["Pub"],"decision":"Allow"}]}]}`), nil
		}
		return nil, nil
	}
	r := NewRemote(fetch, zlog())
	if r.LookupUser("alice") != nil {
		t.Fatal("unknown user found")
	}
	users["alice"] = `{"username":"alice","password":"secret12","userType":"Normal","userStatus":"enable"}`
	if u := r.LookupUser("alice"); u == nil || u.Password != "secret12" {
		t.Fatalf("new user not fetched: %+v", u)
	}
	r.LookupUser("alice")
	if calls[3004] != 2 {
		t.Fatalf("user fetched %d times, want 2 (a miss is not kept, a hit is)", calls[3004])
	}
	g := NewGRPC(r, Config{Authentication: true, Authorization: true})
	send := &v2.SendMessageRequest{Messages: []*v2.Message{{Topic: &v2.Resource{Name: "T"}}}}
	if ref := g.Check(sdkMD("alice", "secret12", "20261201T000000Z"), peer, send); ref != nil {
		t.Fatalf("refused through the remote directory: %s", ref.Remark)
	}
}
