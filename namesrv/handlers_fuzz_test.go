package namesrv

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/auth/signature"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// FuzzHandlers serves one request of any name-server code, with any header
// fields and body, straight through the request table (registrations run at
// once instead of on the worker), then reads what clients read: the route of
// the request's topic, the cluster, the topic list and the KV namespace. No
// request may panic, every answer is a response, and every answer a client
// parses as JSON is valid JSON, whatever names the request put in the
// tables. A header naming an AccessKey turns authentication on: every
// write is then refused NO_PERMISSION (the fuzzer cannot sign).
func FuzzHandlers(f *testing.F) {
	reg := "brokerName=broker-a\nbrokerAddr=127.0.0.1:10911\nclusterName=DefaultCluster\nhaServerAddr=127.0.0.1:10912\nbrokerId=0\ntopic=T"
	f.Add(remoting.RegisterBroker, int32(317), reg, []byte(registerBody))
	f.Add(remoting.RegisterBroker, int32(409), reg+"\ncompressed=true", compressedBody(f, `{"counter":1}`, []string{`T 4 4 6 SINGLE_TAG {}`, `U 1 1 6 SINGLE_TAG {}`}, `[]`))
	f.Add(remoting.RegisterBroker, int32(317), strings.ReplaceAll(reg, "broker-a", "b\x01\"\\\xff")+"\ntopic=T\x00\xfe", []byte("{\"topicConfigSerializeWrapper\":{\"topicConfigTable\":{\"T\\u0000\xfe\":{\"perm\":6},\"U\":{}}}}"))
	f.Add(remoting.PutKVConfig, int32(317), "namespace=ORDER_TOPIC_CONFIG\nkey=T\nvalue=broker-a:4\ntopic=T", []byte(nil))
	f.Add(remoting.QueryDataVersion, int32(317), "clusterName=c\nbrokerAddr=a\ntopic=T", []byte(`{"counter":3,"timestamp":9}`))
	f.Add(remoting.RegisterTopicInNamesrv, int32(317), "topic=T\xff", []byte(`{"queueDatas":[{"brokerName":"x\u0000","perm":6,"readQueueNums":1,"writeQueueNums":1}]}`))
	f.Add(remoting.RegisterTopicInNamesrv, int32(317), "topic=T", []byte(`{queueDatas:[{0:1}]}`))
	f.Add(remoting.RegisterBroker, int32(317), reg+"\nAccessKey=u\nSignature=c2ln", []byte(registerBody))
	f.Add(remoting.PutKVConfig, int32(317), "AccessKey=nobody\nnamespace=n\nkey=k\nvalue=v", []byte(nil))
	kvPath := filepath.Join(f.TempDir(), "kvConfig.json") // never written: nothing persists without Start
	f.Fuzz(func(t *testing.T, code, version int32, header string, body []byte) {
		cfg := DefaultConfig()
		cfg.KvConfigPath = kvPath
		cfg.OrderMessageEnable, cfg.ReturnOrderTopicConfigToBroker = true, true
		s, err := New(cfg, testutil.Logger())
		if err != nil {
			t.Fatal(err)
		}
		authOn := strings.Contains(header, "AccessKey")
		if authOn {
			s.users = users{"u": &user{super: true, key: signature.NewKey("p")}}
		}
		table := s.newHandlers(func(fn func()) bool { fn(); return true }).table()
		codes := make([]int32, 0, len(table))
		for c := range table {
			codes = append(codes, c)
		}
		slices.Sort(codes)

		fields := map[string]string{}
		for _, line := range strings.Split(header, "\n") {
			if k, v, ok := strings.Cut(line, "="); ok {
				fields[k] = v
			}
		}
		serve := func(code int32, ext map[string]string, body []byte) *remoting.Command {
			req := remoting.NewRequest(code, ext, body)
			req.Language, req.Version = remoting.LangJava, version
			resp := table.Serve(nil, req)
			if resp != nil && !resp.IsResponse() {
				t.Fatalf("code %d answered with a request: %+v", code, resp)
			}
			return resp
		}
		if table[code] == nil { // any int32 picks a code the table serves
			code = codes[uint32(code)%uint32(len(codes))]
		}
		resp := serve(code, fields, body)
		if authOn && codeAccess[code] != open {
			// Registrations answer on the worker, through the connection
			// (none here): their refusal shows in the tables only.
			_, routed := s.Routes.Route(fields["topic"])
			_, kvErr := s.KV.Value(fields["namespace"], fields["key"])
			if resp != nil && resp.Code != remoting.NoPermission || routed == nil || kvErr == nil {
				t.Fatalf("unsigned write %d served with authentication on: %+v", code, resp)
			}
		}

		for _, q := range []struct {
			code int32
			ext  map[string]string
		}{
			{remoting.GetRouteInfoByTopic, map[string]string{"topic": fields["topic"]}},
			{remoting.GetBrokerClusterInfo, nil},
			{remoting.GetAllTopicListFromNameServer, nil},
			{remoting.GetSystemTopicListFromNS, nil},
			{remoting.GetKVListByNamespace, map[string]string{"namespace": fields["namespace"]}},
		} {
			resp := serve(q.code, q.ext, nil)
			if resp == nil {
				t.Fatalf("code %d: no answer", q.code)
			}
			if resp.Code == remoting.Success && !json.Valid(resp.Body) {
				t.Fatalf("code %d after %q: body is not JSON: %q", q.code, header, resp.Body)
			}
		}
	})
}
