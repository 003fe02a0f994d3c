package namesrv

import (
	"context"
	"hash/crc32"
	"strconv"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// startNamesrv runs a name server serving its Handlers on a free loopback port.
func startNamesrv(t *testing.T, edit func(*Config)) (*Server, *remoting.Client) {
	t.Helper()
	cfg := testConfig(t)
	cfg.ServerSelectorThreads = 2
	if edit != nil {
		edit(&cfg)
	}
	ns, err := New(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := ns.Start(ns.Handlers()); err != nil {
		t.Fatal(err)
	}
	return ns, clientUntilShutdown(t, ns.Shutdown)
}

// clientUntilShutdown returns a client for a server the test started; at
// cleanup the client closes and the server shuts down.
func clientUntilShutdown(t *testing.T, shutdown func(context.Context) error) *remoting.Client {
	cl := remoting.NewClient(testutil.Logger())
	t.Cleanup(func() {
		_ = cl.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := shutdown(ctx); err != nil {
			t.Errorf("shutdown: %v", err)
		}
	})
	return cl
}

func call(t *testing.T, cl *remoting.Client, addr string, code int32, ext map[string]string, body []byte) *remoting.Command {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := remoting.NewRequest(code, ext, body)
	req.Language, req.Version = remoting.LangGo, 317 // as rocketmq-client-go sends
	resp, err := cl.Invoke(ctx, addr, req)
	if err != nil {
		t.Fatalf("invoke code %d: %v", code, err)
	}
	return resp
}

func expectCode(t *testing.T, resp *remoting.Command, code int32) {
	t.Helper()
	if resp.Code != code {
		t.Fatalf("code %d (remark %q), want %d", resp.Code, resp.Remark, code)
	}
}

const registerBody = `{"filterServerList":[],"topicConfigSerializeWrapper":{"dataVersion":{"counter":12,"stateVersion":0,"timestamp":1700000000000},"topicConfigTable":{"T":{"attributes":{},"order":false,"perm":6,"readQueueNums":4,"topicFilterType":"SINGLE_TAG","topicName":"T","topicSysFlag":0,"writeQueueNums":4},"TBW102":{"attributes":{},"order":false,"perm":7,"readQueueNums":8,"topicFilterType":"SINGLE_TAG","topicName":"TBW102","topicSysFlag":0,"writeQueueNums":8}}}}`

func registerHeader(name, addr string, id int64, body []byte) map[string]string {
	return map[string]string{
		"brokerName":   name,
		"brokerAddr":   addr,
		"clusterName":  "DefaultCluster",
		"haServerAddr": "127.0.0.1:10912",
		"brokerId":     strconv.FormatInt(id, 10),
		"compressed":   "false",
		"bodyCrc32":    strconv.FormatInt(int64(crc32.ChecksumIEEE(body)&0x7fffffff), 10),
	}
}

func TestNamesrvRequests(t *testing.T) {
	ns, cl := startNamesrv(t, nil)
	addr := ns.Addr()
	body := []byte(registerBody)

	// A bad checksum is refused.
	h := registerHeader("broker-a", "127.0.0.1:10911", 0, body)
	h["bodyCrc32"] = "12345"
	resp := call(t, cl, addr, remoting.RegisterBroker, h, body)
	expectCode(t, resp, remoting.SystemError)
	if resp.Remark != "crc32 not match" {
		t.Fatalf("remark %q", resp.Remark)
	}

	resp = call(t, cl, addr, remoting.RegisterBroker, registerHeader("broker-a", "127.0.0.1:10911", 0, body), body)
	expectCode(t, resp, remoting.Success)
	if _, ok := resp.Lookup("masterAddr"); ok {
		t.Fatalf("master got masterAddr: %v", resp.ExtFields)
	}

	resp = call(t, cl, addr, remoting.GetRouteInfoByTopic, map[string]string{"topic": "T"}, nil)
	expectCode(t, resp, remoting.Success)
	testutil.Golden(t, "testdata/route-T.json", resp.Body)

	resp = call(t, cl, addr, remoting.GetRouteInfoByTopic, map[string]string{"topic": "Nope"}, nil)
	expectCode(t, resp, remoting.TopicNotExist)
	if want := "No topic route info in name server for the topic: Nope" + faqSuffix; resp.Remark != want {
		t.Fatalf("remark %q", resp.Remark)
	}
	resp = call(t, cl, addr, remoting.GetRouteInfoByTopic, nil, nil)
	expectCode(t, resp, remoting.SystemError)

	// A slave learns its master.
	resp = call(t, cl, addr, remoting.RegisterBroker, registerHeader("broker-a", "127.0.0.1:10921", 1, body), body)
	expectCode(t, resp, remoting.Success)
	if resp.Str("masterAddr") != "127.0.0.1:10911" || resp.Str("haServerAddr") != "127.0.0.1:10912" {
		t.Fatalf("slave answer %v", resp.ExtFields)
	}

	resp = call(t, cl, addr, remoting.GetBrokerClusterInfo, nil, nil)
	expectCode(t, resp, remoting.Success)
	testutil.Golden(t, "testdata/cluster-master-slave.json", resp.Body)

	resp = call(t, cl, addr, remoting.GetAllTopicListFromNameServer, nil, nil)
	expectCode(t, resp, remoting.Success)
	if string(resp.Body) != `{"topicList":["T","TBW102"]}` {
		t.Fatalf("topic list %s", resp.Body)
	}
	resp = call(t, cl, addr, remoting.GetTopicsByCluster, map[string]string{"cluster": "DefaultCluster"}, nil)
	expectCode(t, resp, remoting.Success)
	if string(resp.Body) != `{"topicList":["T","TBW102"]}` {
		t.Fatalf("topics by cluster %s", resp.Body)
	}
	resp = call(t, cl, addr, remoting.GetSystemTopicListFromNS, nil, nil)
	expectCode(t, resp, remoting.Success)
	if string(resp.Body) != `{"brokerAddr":"127.0.0.1:10911","topicList":["DefaultCluster","broker-a"]}` {
		t.Fatalf("system topics %s", resp.Body)
	}

	dvHeader := map[string]string{"brokerName": "broker-a", "brokerAddr": "127.0.0.1:10911", "clusterName": "DefaultCluster", "brokerId": "0"}
	resp = call(t, cl, addr, remoting.QueryDataVersion, dvHeader, []byte(`{"counter":12,"stateVersion":0,"timestamp":1700000000000}`))
	expectCode(t, resp, remoting.Success)
	if resp.Str("changed") != "false" || string(resp.Body) != `{"counter":12,"stateVersion":0,"timestamp":1700000000000}` {
		t.Fatalf("data version %v %s", resp.ExtFields, resp.Body)
	}
	resp = call(t, cl, addr, remoting.QueryDataVersion, dvHeader, []byte(`{"counter":13,"timestamp":1700000000000}`))
	if resp.Str("changed") != "true" {
		t.Fatalf("data version %v", resp.ExtFields)
	}

	resp = call(t, cl, addr, codeWipeWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
	expectCode(t, resp, remoting.Success)
	if resp.Str("wipeTopicCount") != "2" {
		t.Fatalf("wipe %v", resp.ExtFields)
	}
	resp = call(t, cl, addr, codeAddWritePermOfBroker, map[string]string{"brokerName": "broker-a"}, nil)
	if resp.Str("addTopicCount") != "2" {
		t.Fatalf("add %v", resp.ExtFields)
	}

	resp = call(t, cl, addr, remoting.DeleteTopicInNamesrv, map[string]string{"topic": "T"}, nil)
	expectCode(t, resp, remoting.Success)
	resp = call(t, cl, addr, remoting.GetRouteInfoByTopic, map[string]string{"topic": "T"}, nil)
	expectCode(t, resp, remoting.TopicNotExist)

	resp = call(t, cl, addr, remoting.UnregisterBroker, dvHeader, nil)
	expectCode(t, resp, remoting.Success)
	resp = call(t, cl, addr, remoting.GetBrokerClusterInfo, nil, nil)
	testutil.Golden(t, "testdata/cluster-slave-only.json", resp.Body)

	resp = call(t, cl, addr, 99999, nil, nil)
	expectCode(t, resp, remoting.RequestCodeNotSupported)
}

func TestNamesrvKVConfig(t *testing.T) {
	ns, cl := startNamesrv(t, func(c *Config) { c.OrderMessageEnable = true })
	addr := ns.Addr()
	key := map[string]string{"namespace": NamespaceOrderTopicConfig, "key": "T"}

	resp := call(t, cl, addr, remoting.GetKVConfig, key, nil)
	expectCode(t, resp, remoting.QueryNotFound)
	if resp.Remark != "No config item, Namespace: ORDER_TOPIC_CONFIG Key: T" {
		t.Fatalf("remark %q", resp.Remark)
	}
	resp = call(t, cl, addr, remoting.GetKVListByNamespace, map[string]string{"namespace": NamespaceOrderTopicConfig}, nil)
	expectCode(t, resp, remoting.QueryNotFound)
	if resp.Remark != "No config item, Namespace: ORDER_TOPIC_CONFIG" {
		t.Fatalf("remark %q", resp.Remark)
	}
	resp = call(t, cl, addr, remoting.PutKVConfig, map[string]string{"namespace": NamespaceOrderTopicConfig, "key": "T"}, nil)
	expectCode(t, resp, remoting.SystemError) // value missing

	put := map[string]string{"namespace": NamespaceOrderTopicConfig, "key": "T", "value": "broker-a:4"}
	expectCode(t, call(t, cl, addr, remoting.PutKVConfig, put, nil), remoting.Success)
	resp = call(t, cl, addr, remoting.GetKVConfig, key, nil)
	expectCode(t, resp, remoting.Success)
	if resp.Str("value") != "broker-a:4" {
		t.Fatalf("value %v", resp.ExtFields)
	}
	resp = call(t, cl, addr, remoting.GetKVListByNamespace, map[string]string{"namespace": NamespaceOrderTopicConfig}, nil)
	expectCode(t, resp, remoting.Success)
	if string(resp.Body) != `{"table":{"T":"broker-a:4"}}` {
		t.Fatalf("kv list %s", resp.Body)
	}

	// The order config rides along in route data and registration answers.
	body := []byte(registerBody)
	resp = call(t, cl, addr, remoting.RegisterBroker, registerHeader("broker-a", "127.0.0.1:10911", 0, body), body)
	expectCode(t, resp, remoting.Success)
	if string(resp.Body) != `{"table":{"T":"broker-a:4"}}` {
		t.Fatalf("register answer body %s", resp.Body)
	}
	resp = call(t, cl, addr, remoting.GetRouteInfoByTopic, map[string]string{"topic": "T"}, nil)
	testutil.Golden(t, "testdata/route-T-ordered.json", resp.Body)

	expectCode(t, call(t, cl, addr, remoting.DeleteKVConfig, key, nil), remoting.Success)
	expectCode(t, call(t, cl, addr, remoting.GetKVConfig, key, nil), remoting.QueryNotFound)
}

func TestNamesrvDisabledLists(t *testing.T) {
	ns, cl := startNamesrv(t, func(c *Config) { c.EnableAllTopicList, c.EnableTopicList = false, false })
	for _, code := range []int32{remoting.GetAllTopicListFromNameServer, remoting.GetTopicsByCluster} {
		resp := call(t, cl, ns.Addr(), code, map[string]string{"cluster": "DefaultCluster"}, nil)
		expectCode(t, resp, remoting.SystemError)
		if resp.Remark != "disable" {
			t.Fatalf("code %d remark %q", code, resp.Remark)
		}
	}
}

func TestNamesrvBrokerConnClose(t *testing.T) {
	ns, cl := startNamesrv(t, nil)
	addr := ns.Addr()
	broker := remoting.NewClient(testutil.Logger())
	body := []byte(registerBody)
	resp := call(t, broker, addr, remoting.RegisterBroker, registerHeader("broker-a", "127.0.0.1:10911", 0, body), body)
	expectCode(t, resp, remoting.Success)
	expectCode(t, call(t, cl, addr, remoting.GetRouteInfoByTopic, map[string]string{"topic": "T"}, nil), remoting.Success)

	if err := broker.Close(); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool {
		return call(t, cl, addr, remoting.GetRouteInfoByTopic, map[string]string{"topic": "T"}, nil).Code == remoting.TopicNotExist
	})
	if resp := call(t, cl, addr, remoting.GetBrokerClusterInfo, nil, nil); string(resp.Body) != `{"brokerAddrTable":{},"clusterAddrTable":{}}` {
		t.Fatalf("cluster %s", resp.Body)
	}
}
