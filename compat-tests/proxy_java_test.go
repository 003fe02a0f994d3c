package compattest

import (
	"strconv"
	"testing"
	"time"
)

// TestJavaGRPC: the official Java 5.x SDK (rocketmq-client-java 5.0.8,
// java-grpc/) through mqproxy, TLS on as the SDK defaults: normal, FIFO,
// delay and transactional producers read back by the 4.x Go client; where
// the broker serves pop, a SimpleConsumer receiving what the 4.x Go client
// sent, and a PushConsumer whose listener always fails, retried to the
// group's max attempts and then found in the group's DLQ by the 4.x client.
func TestJavaGRPC(t *testing.T) {
	requireJava(t)
	t.Parallel() // its own Maven project (java-grpc): no other mvn compiles into its target
	for _, kind := range proxyTargets(t) {
		t.Run(kind, func(t *testing.T) {
			b := startTxBroker(t, kind, "jgrpc-"+kind)
			c := b.c
			pp := startProxy(t, c, "")
			topicN, topicF, topicD, topicT := uniq("JN"), uniq("JF"), uniq("JD"), uniq("JT")
			createTopic(t, c, topicN)
			createTypedTopic(t, c, topicF, "FIFO")
			createTypedTopic(t, c, topicD, "DELAY")
			createTypedTopic(t, c, topicT, "TRANSACTION")
			props := map[string]string{"proxy": pp.addr, "topicN": topicN, "topicF": topicF, "topicD": topicD, "topicT": topicT}
			class := "ProxyTest#producers"

			pop := popServed(t, c)
			const maxAttempts = 3
			pushGroup := uniq("JPG")
			if pop {
				topicC, topicP := uniq("JC"), uniq("JP")
				createTopic(t, c, topicC)
				createTopic(t, c, topicP)
				createGroup(t, c, pushGroup, maxAttempts-1)
				p4 := newProducer(t, c)
				for i := 0; i < 6; i++ {
					p4.mustSend(t, newMsg(topicC, "c-"+strconv.Itoa(i), "TA"))
				}
				p4.mustSend(t, newMsg(topicP, "p-0", "TA"))
				props["topicC"], props["count"], props["group"] = topicC, "6", uniq("JSG")
				props["topicP"], props["pushGroup"], props["maxAttempts"] = topicP, pushGroup, strconv.Itoa(maxAttempts)
				class += "+simpleConsumer+pushConsumerRetryDLQ"
			} else {
				t.Logf("broker %s does not serve POP_MESSAGE: producers only", c.brokerAddr)
			}
			runMaven(t, mavenRun{dir: "java-grpc", serialize: "JSON", class: class, props: props})
			if t.Failed() {
				return
			}
			checkJavaProducers(t, c, "through the proxy", topicN, topicF, topicD, topicT)
			if !pop {
				return
			}
			// The JUnit case saw exactly maxAttempts deliveries; the message
			// is then in the group's DLQ (counted, not consumed), once.
			dlqTopic := "%DLQ%" + pushGroup
			var n int64
			if !waitFor(t, 20*time.Second, func() bool { n, _ = getMaxOffset(c.brokerAddr, dlqTopic, 0); return n >= 1 }) {
				t.Fatalf("%s holds %d messages, want the one past its max attempts", dlqTopic, n)
			}
			time.Sleep(time.Second) // a second forward would land within this
			if n, _ = getMaxOffset(c.brokerAddr, dlqTopic, 0); n != 1 {
				t.Errorf("%s holds %d messages, want 1", dlqTopic, n)
			}
		})
	}
}

// checkJavaProducers reads back, with the 4.x Go client, what ProxyTest#producers
// sent through a proxy to the normal, FIFO, delay and transaction topics:
// every id, tags and keys, one queue for the FIFO group, no rolled back
// transaction.
func checkJavaProducers(t *testing.T, c *cluster, via, topicN, topicF, topicD, topicT string) {
	t.Helper()
	col := newCollector("v4")
	for _, topic := range []string{topicN, topicF, topicD, topicT} {
		startConsumer(t, c, uniq("CG"), topic, "*", col)
	}
	want := []string{"j-n-0", "j-n-1", "j-n-2", "j-f-0", "j-f-1", "j-f-2", "j-f-3", "j-d-0", "j-t-commit"}
	waitAll(t, col, want, 30*time.Second, "Java 5.x SDK messages "+via)
	if r := col.get("j-n-0")[0]; r.Tags != "TA" || r.Keys != "k-j-n-0" {
		t.Errorf("j-n-0 arrived with tags %q keys %q", r.Tags, r.Keys)
	}
	q := col.get("j-f-0")[0].QueueID
	for i := 1; i < 4; i++ {
		if r := col.get("j-f-" + strconv.Itoa(i))[0]; r.QueueID != q {
			t.Errorf("FIFO j-f-%d in queue %d, j-f-0 in %d", i, r.QueueID, q)
		}
	}
	if len(col.get("j-t-rollback")) != 0 {
		t.Error("rolled back Java transaction delivered")
	}
}

// createGroup creates a subscription group with retryMaxTimes
// (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP, SubscriptionGroupConfig JSON).
func createGroup(t *testing.T, c *cluster, group string, retryMaxTimes int) {
	t.Helper()
	body := `{"groupName":"` + group + `","consumeEnable":true,"consumeFromMinEnable":true,"consumeBroadcastEnable":true,` +
		`"retryQueueNums":1,"retryMaxTimes":` + strconv.Itoa(retryMaxTimes) + `,"brokerId":0,"whichBrokerWhenConsumeSlowly":1,` +
		`"notifyConsumerIdsChangedEnable":true}`
	resp, err := rawInvoke(c.brokerAddr, newRequest(200, map[string]string{}, []byte(body)), 5*time.Second)
	if err != nil || resp.Code != 0 {
		t.Fatalf("create group %s: %v %+v", group, err, resp)
	}
}
