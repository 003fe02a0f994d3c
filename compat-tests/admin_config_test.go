package compattest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// UPDATE_BROKER_CONFIG (25) against a real mqbroker, as mqadmin
// updateBrokerConfig sends it: a runtime key (brokerPermission) is in force
// at once — the name server routes the topic read-only —, a black-listed key
// is refused with Apache's code and remark, the -c file is rewritten with a
// .bak of the original, and a restart on that file starts with the new value.
//
// brokerPermission is in the default black list: the operator opts in by
// naming a shorter configBlackList in broker.conf, as Apache's operator does.
func TestUpdateBrokerConfigLive(t *testing.T) {
	c := newClusterConf(t, "brokercfg", "configBlackList=configBlackList;brokerConfigPath\n")
	topic := uniq("CfgTopic")
	createTopic(t, c, topic) // the official Go client's admin
	conf := filepath.Join(c.dir, "broker.properties")
	orig, err := os.ReadFile(conf)
	if err != nil {
		t.Fatal(err)
	}
	update := func(body string) *rawCmd {
		return invokeBroker(t, c.brokerAddr, javaRequest(25, nil, []byte(body)))
	}
	getConfig := func() string {
		resp := invokeBroker(t, c.brokerAddr, javaRequest(26, nil, nil))
		if resp.Code != 0 {
			t.Fatalf("GET_BROKER_CONFIG: %d %q", resp.Code, resp.Remark)
		}
		return "\n" + string(resp.Body)
	}

	for _, body := range []string{"brokerConfigPath=/tmp/elsewhere\n", "configBlackList=\n", "rocketmqHome=/x\nbrokerPermission=2\n"} {
		expectRefused(t, "black-listed "+strings.TrimSpace(body), update(body), 16, "Can not update config in black list.")
	}
	if resp := update("brokerPermission=4\n"); resp.Code != 0 {
		t.Fatalf("UPDATE_BROKER_CONFIG brokerPermission=4: %d %q", resp.Code, resp.Remark)
	}
	if cfg := getConfig(); !strings.Contains(cfg, "\nbrokerPermission=4\n") {
		t.Fatalf("GET_BROKER_CONFIG after the update:%s", cfg)
	}
	// In force: re-registered at once with the perms masked (Apache's
	// registerBrokerAll after a brokerPermission change).
	var last string
	if !waitFor(t, 15*time.Second, func() bool {
		_, rd, _, err := queryRoute(c.nsAddr, topic)
		if err != nil || rd == nil {
			last = fmt.Sprint(err)
			return false
		}
		last = rd.raw
		return len(rd.queues) == 1 && rd.queues[0].Perm == 4
	}) {
		t.Fatalf("route of %s never read-only: %s", topic, last)
	}
	// A send is refused now: the broker checks the permission in force.
	resp := invokeBroker(t, c.brokerAddr, sendReq(topic))
	if resp.Code != 16 {
		t.Fatalf("send to a read-only broker: %d %q, want NO_PERMISSION", resp.Code, resp.Remark)
	}

	// Written back, the original kept as .bak.
	if !waitFor(t, 10*time.Second, func() bool {
		b, _ := os.ReadFile(conf)
		return strings.Contains("\n"+string(b), "\nbrokerPermission=4\n")
	}) {
		b, _ := os.ReadFile(conf)
		t.Fatalf("%s not written back:\n%s", conf, b)
	}
	if bak, err := os.ReadFile(conf + ".bak"); err != nil || string(bak) != string(orig) {
		t.Fatalf("%s.bak = %q, %v; want the original", conf, bak, err)
	}

	// A restart on the same file (not rewritten by the harness) reads it.
	if graceful, _ := c.stopBroker(); !graceful {
		t.Errorf("broker did not stop on SIGTERM")
	}
	c.starts++
	c.broker, err = startProc(fmt.Sprintf("mqbroker#%d", c.starts), filepath.Join(binDir, "mqbroker"),
		[]string{"-n", c.nsAddr, "-c", conf}, filepath.Join(c.dir, "broker.log"))
	if err != nil {
		t.Fatal(err)
	}
	if err := waitTCP(c.broker, c.brokerAddr, readyTimeout); err != nil {
		t.Fatal(err)
	}
	if cfg := getConfig(); !strings.Contains(cfg, "\nbrokerPermission=4\n") {
		t.Fatalf("GET_BROKER_CONFIG after a restart:%s", cfg)
	}
	if resp := update("brokerPermission=6\n"); resp.Code != 0 {
		t.Fatalf("UPDATE_BROKER_CONFIG brokerPermission=6: %d %q", resp.Code, resp.Remark)
	}
	if resp := invokeBroker(t, c.brokerAddr, sendReq(topic)); resp.Code != 0 {
		t.Fatalf("send after brokerPermission=6: %d %q", resp.Code, resp.Remark)
	}
}

// sendReq is a SEND_MESSAGE (10) of one small message to queue 0.
func sendReq(topic string) *rawCmd {
	return javaRequest(10, map[string]string{"producerGroup": "PG_cfg", "topic": topic, "defaultTopic": "TBW102",
		"defaultTopicQueueNums": "4", "queueId": "0", "sysFlag": "0", "bornTimestamp": fmt.Sprint(time.Now().UnixMilli()),
		"flag": "0", "properties": "", "reconsumeTimes": "0", "unitMode": "false", "batch": "false"}, []byte("hello"))
}
