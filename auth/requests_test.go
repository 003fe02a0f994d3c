package auth

import (
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/rocketgo/rocketgo/acl"
	"github.com/rocketgo/rocketgo/remoting"
)

// TestRequests pins the builder's table: special cases, annotated
// headers (splitters, retry topics), the Cluster fallback, unannotated
// codes and unreadable bodies.
func TestRequests(t *testing.T) {
	key := func(rs []Request) []string {
		var out []string
		for _, r := range rs {
			s := r.Resource.Key() + "/"
			for _, a := range r.Actions {
				s += a.String()
			}
			out = append(out, s)
		}
		return out
	}
	for _, c := range []struct {
		name string
		code int32
		ext  map[string]string
		body string
		want []string
		err  bool
	}{
		{"send", 10, map[string]string{"topic": "T"}, "", []string{"Topic:T/Pub"}, false},
		{"send retry", 310, map[string]string{"b": "%RETRY%G", "a": "PG"}, "", []string{"Group:PG/Sub"}, false},
		{"pull retry", 11, map[string]string{"topic": "%RETRY%G", "consumerGroup": "G"}, "", []string{"Group:G/Sub"}, false},
		{"route", 105, map[string]string{"topic": "T"}, "", []string{"Topic:T/PubSubGet"}, false},
		{"consume stats", 208, map[string]string{"consumerGroup": "G", "topicList": "a;b;;%RETRY%x"}, "",
			[]string{"Group:G/Get", "Topic:a/Get", "Topic:b/Get", "Group:x/Get"}, false},
		{"admin code", 3005, map[string]string{"filter": ""}, "", []string{"Cluster:C/Get"}, false},
		{"create topic", 17, map[string]string{"topic": "T"}, "", []string{"Topic:T/Create"}, false},
		{"all topic config", 21, map[string]string{"x": "y"}, "", nil, false},
		{"unannotated", 223, map[string]string{"x": "y"}, "", nil, false},
		{"subscription group", 200, map[string]string{"x": "y"}, `{"groupName":"G","consumeEnable":false}`, []string{"Group:G/Update"}, false},
		{"subscription group list", 225, map[string]string{"x": "y"},
			`{"groupConfigList":[{"groupName":"G1"},{"groupName":"%RETRY%G2"}]}`, []string{"Group:G1/Update", "Group:G2/Update"}, false},
		{"subscription group garbage", 200, map[string]string{"x": "y"}, `{`, nil, true},
		{"unannotated too", 201, map[string]string{"x": "y"}, "", nil, false},
		{"create group, no header", 200, nil, `{"groupName":"G","consumeEnable":false}`, []string{"Group:G/Update"}, false},
		{"create group garbage", 200, nil, `{`, nil, true},
		{"create groups", 225, nil, `{"groupConfigList":[{"groupName":"A"},{"groupName":"%RETRY%B"}]}`, []string{"Group:A/Update", "Group:B/Update"}, false},
		{"create topics", 18, nil, `{"topicConfigList":[{"topicName":"T1"},{"topicName":"T2"}]}`, []string{"Topic:T1/Create", "Topic:T2/Create"}, false},
		{"static topic", 513, map[string]string{"topic": "S"}, "", []string{"Topic:S/Create"}, false},
		{"cleanup", 316, nil, "", []string{"Cluster:C/Update"}, false},
		{"lite subscription", 200071, nil, `{"subscriptionSet":[]}`, []string{"Cluster:C/Update"}, false},
		{"lite dispatch", 200079, map[string]string{"group": "G"}, "", []string{"Cluster:C/Update"}, false},
		{"lite pop", 200070, map[string]string{"consumerGroup": "G", "topic": "P", "clientId": "c"}, "", []string{"Group:G/Sub", "Topic:P/Sub"}, false},
		{"acl 1.0 edit", 50, map[string]string{"accessKey": "k"}, "", []string{"Cluster:C/Update"}, false},
		{"broker config", 25, map[string]string{"x": "y"}, "", []string{"Cluster:C/Update"}, false},
		{"broker config, no header", 25, nil, "authenticationEnabled=false", []string{"Cluster:C/Update"}, false},
		{"no fields", 10, nil, "", nil, false},
		{"heartbeat", 34, map[string]string{"x": "y"},
			`{"consumerDataSet":[{"groupName":"G","subscriptionDataSet":[{"topic":"T"},{"topic":"%RETRY%G"}]}]}`,
			[]string{"Group:G/Sub", "Topic:T/Sub"}, false},
		{"heartbeat garbage", 34, map[string]string{"x": "y"}, `{`, nil, true},
		{"offset without queueId", 15, map[string]string{"consumerGroup": "G", "topic": "T", "commitOffset": "1"}, "", nil, true},
	} {
		req := remoting.NewRequest(c.code, c.ext, []byte(c.body))
		rs, err := requests(req, "C", nil)
		if (err != nil) != c.err {
			t.Errorf("%s: err %v", c.name, err)
			continue
		}
		if got := key(rs); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

// TestMigrate: a plain_acl.yml account becomes a user and AuthMigrator's
// policies; an existing user is left alone.
func TestMigrate(t *testing.T) {
	home := t.TempDir()
	must(t, os.MkdirAll(filepath.Join(home, "conf"), 0o755))
	must(t, os.WriteFile(filepath.Join(home, "conf", "plain_acl.yml"), []byte(`accounts:
  - accessKey: rocketmqU1
    secretKey: secretKey1
    defaultTopicPerm: DENY
    defaultGroupPerm: SUB
    topicPerms: [TopicA=PUB|SUB, TopicB=DENY]
    groupPerms: [GroupA=SUB]
  - accessKey: rocketmqA1
    secretKey: secretKey2
    admin: true
`), 0o644))
	accts, err := acl.PlainAccounts(home)
	must(t, err)
	_, v := newTestStore(t)
	for _, a := range accts {
		must(t, v.Migrate(a))
	}
	u, _ := v.GetUser("rocketmqA1")
	if u == nil || u.UserType != "Super" || u.Password != "secretKey2" {
		t.Fatalf("admin account: %+v", u)
	}
	got, err := v.GetAcl("User:rocketmqU1")
	must(t, err)
	want := AclInfo{Subject: "User:rocketmqU1", Policies: []PolicyInfo{
		{PolicyType: "Custom", Entries: []PolicyEntryInfo{
			{Resource: "Topic:TopicA", Actions: []string{"Pub", "Sub"}, Decision: "Allow"},
			{Resource: "Topic:TopicB", Actions: []string{"All"}, Decision: "Deny"},
			{Resource: "Group:GroupA", Actions: []string{"Sub"}, Decision: "Allow"},
		}},
		{PolicyType: "Default", Entries: []PolicyEntryInfo{
			{Resource: "Topic:*", Actions: []string{"All"}, Decision: "Deny"},
			{Resource: "Group:*", Actions: []string{"Sub"}, Decision: "Allow"},
		}},
	}}
	if got == nil || !reflect.DeepEqual(*got, want) {
		t.Fatalf("migrated acl:\n%+v\nwant\n%+v", got, want)
	}
	must(t, v.UpdateUser("", UserInfo{Username: "rocketmqU1", Password: "changed1"}))
	must(t, v.Migrate(accts[0]))
	if u, _ := v.GetUser("rocketmqU1"); u.Password != "changed1" {
		t.Fatalf("migration overwrote an existing user")
	}
}
