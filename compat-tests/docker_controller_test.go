package compattest

// TestDockerController drives docker/docker-compose-controller.yml (a name
// server, three mqcontroller containers, three controller-mode brokers of
// broker-a), brought up by docker/test.sh: the controllers must elect one
// master with two slaves; the official Go client sends to the master and
// reads back; then the master's container is stopped, another broker must
// be elected and routed, take sends, and a new group must read every
// message acknowledged before and after (allAckInSyncStateSet=true in the
// compose file's broker configs: an acknowledged message is on every
// in-sync replica); the old master's container started again must rejoin
// as a slave. Skipped unless ROCKETGO_DOCKER=1; test.sh sets:
//
//	ROCKETGO_DOCKER_NS                name server, host:published port
//	ROCKETGO_DOCKER_BROKER_CONTAINERS "addr=container ..." for the three
//	                                  brokers (container address:10911); empty
//	                                  from a container: no master stop there

import (
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/tidwall/gjson"
)

const (
	codeGetBrokerClusterInfo  = 106
	dockerCtlBrokerName       = "broker-a"
	dockerCtlReplicas         = 3
	dockerCtlElectionDeadline = 90 * time.Second
)

// clusterAddrs returns the addresses the name server lists for brokerName
// by broker id (GET_BROKER_CLUSTER_INFO), nil when it cannot say.
// brokerName is a gjson path element: no '.', '*' or '?'.
func clusterAddrs(nsAddr, brokerName string) map[int64]string {
	resp, err := rawInvoke(nsAddr, newRequest(codeGetBrokerClusterInfo, nil, nil), 3*time.Second)
	if err != nil || resp.Code != 0 {
		return nil
	}
	// The broker table keyed by name, its brokerAddrs keyed by id: the
	// route's brokerData shape, so parseRoute reads it.
	bd := gjson.GetBytes(resp.Body, "brokerAddrTable."+brokerName)
	if !bd.Exists() {
		return nil
	}
	rd, err := parseRoute([]byte(`{"queueDatas":[],"brokerDatas":[` + bd.Raw + `]}`))
	if err != nil {
		return nil
	}
	return rd.brokers[brokerName]
}

// dockerMaster waits until the name server lists a master (id 0) of
// broker-a other than notAddr and at least wantSlaves other replicas.
func dockerMaster(t *testing.T, nsAddr, notAddr string, wantSlaves int) (master string, slaves []string) {
	t.Helper()
	var last map[int64]string
	if !waitFor(t, dockerCtlElectionDeadline, func() bool {
		last = clusterAddrs(nsAddr, dockerCtlBrokerName)
		master, slaves = "", nil
		for id, a := range last {
			if id == 0 {
				master = a
			} else if a != notAddr {
				slaves = append(slaves, a)
			}
		}
		return master != "" && master != notAddr && len(slaves) >= wantSlaves
	}) {
		t.Fatalf("no master of %s other than %q with %d slaves within %s: %v",
			dockerCtlBrokerName, notAddr, wantSlaves, dockerCtlElectionDeadline, last)
	}
	return master, slaves
}

func TestDockerController(t *testing.T) {
	if os.Getenv("ROCKETGO_DOCKER") != "1" {
		t.Skip("ROCKETGO_DOCKER=1 not set: run make test-docker (docker/test.sh)")
	}
	ns := os.Getenv("ROCKETGO_DOCKER_NS")
	if ns == "" {
		t.Fatal("ROCKETGO_DOCKER_NS must be set (docker/test.sh sets it)")
	}
	containers := map[string]string{}
	for _, kv := range strings.Fields(os.Getenv("ROCKETGO_DOCKER_BROKER_CONTAINERS")) {
		if a, id, ok := strings.Cut(kv, "="); ok {
			containers[a] = id
		}
	}
	waitDial(t, ns, 30*time.Second)
	start := time.Now()
	master, slaves := dockerMaster(t, ns, "", dockerCtlReplicas-1)
	t.Logf("master %s, slaves %v, listed %s after the test began", master, slaves, time.Since(start).Round(time.Millisecond))

	c := &cluster{name: "docker-controller", nsAddr: ns, brokerAddr: master}
	topic := uniq("DockerCtlTopic")
	createTopicHA(t, ns, topic, master)
	waitRoute(t, c, topic, 0)
	// The slaves copy the master's topics (every 10 s, controller mode);
	// one that has not is no successor for this topic.
	for _, s := range slaves {
		if !waitFor(t, 60*time.Second, func() bool {
			resp, err := rawInvoke(s, newRequest(codeGetAllTopicConfig, nil, nil), 3*time.Second)
			return err == nil && resp.Code == 0 && strings.Contains(string(resp.Body), `"`+topic+`"`)
		}) {
			t.Fatalf("slave %s never copied topic %s from the master %s", s, topic, master)
		}
	}

	p := newProducer(t, c)
	var acked []string
	for i := 0; i < 100; i++ {
		id := fmt.Sprintf("c%03d", i)
		p.mustSend(t, newMsg(topic, id, "docker"))
		acked = append(acked, id)
	}
	col := newCollector("before")
	h := startConsumer(t, c, uniq("DockerCtlCG"), topic, "*", col)
	waitAll(t, col, acked, 60*time.Second, "consume from the elected master")
	h.shutdown()

	id := containers[master]
	if id == "" {
		t.Logf("no container for the master %s (run from a container): no failover", master)
		return
	}
	stopped := time.Now()
	if out, err := exec.Command("docker", "stop", "-t", "20", id).CombinedOutput(); err != nil {
		t.Fatalf("docker stop %s (master %s): %v\n%s", id, master, err, out)
	}
	newMaster, _ := dockerMaster(t, ns, master, 1)
	c.brokerAddr = newMaster
	waitRoute(t, c, topic, 0)
	t.Logf("master %s stopped; %s elected and routed %s later", master, newMaster, time.Since(stopped).Round(time.Millisecond))

	for i := 0; i < 20; i++ {
		id := fmt.Sprintf("after%02d", i)
		var sendErr error
		if !waitFor(t, 60*time.Second, func() bool {
			r, err := p.sendSync(t.Context(), newMsg(topic, id, "docker"))
			sendErr = err
			if err == nil && r.MessageQueue.BrokerName != dockerCtlBrokerName {
				sendErr = fmt.Errorf("sent to %s", r.MessageQueue.BrokerName)
			}
			return sendErr == nil
		}) {
			t.Fatalf("send %s after the master's stop: %v", id, sendErr)
		}
		acked = append(acked, id)
	}
	t.Logf("first send after the stop accepted; 20 sent %s after the stop", time.Since(stopped).Round(time.Millisecond))
	col2 := newCollector("after")
	startConsumer(t, c, uniq("DockerCtlCG2"), topic, "*", col2)
	waitAll(t, col2, acked, 60*time.Second, "consume after the master's container stopped")
	if d := col2.distinct(); d != len(acked) {
		t.Fatalf("after failover: %d distinct messages, want %d", d, len(acked))
	}

	// The old master's container started again: it rejoins as a slave of
	// the new master (and the set is whole for the run from a container).
	if out, err := exec.Command("docker", "start", id).CombinedOutput(); err != nil {
		t.Fatalf("docker start %s (old master %s): %v\n%s", id, master, err, out)
	}
	m, slaves := dockerMaster(t, ns, "", dockerCtlReplicas-1)
	if m != newMaster {
		t.Fatalf("after the old master %s came back the master is %s, want %s kept", master, m, newMaster)
	}
	t.Logf("old master %s back as a slave: master %s, slaves %v", master, m, slaves)
}
