package compattest

// The official Java clients against rocketgo's image, brought up by
// docker/test.sh from the compose files (make test-docker), from the host:
// the 4.9.8 Remoting client through docker-compose.yml's published ports
// (TestDockerJava) and the 5.x gRPC SDK through docker-compose-5.x.yml's
// proxy container (TestDockerJava5x). Each needs ROCKETGO_DOCKER=1 and
// ROCKETGO_JAVA=1 (test.sh sets the second when mvn is there) and runs a
// subset of the JUnit cases the non-Docker tests run, to keep
// make test-docker short: the full sets run in make test-java.

import (
	"fmt"
	"strconv"
	"strings"
	"testing"
	"time"
)

// dockerBrokerName is the brokerName of docker/data/broker/conf/broker.conf.
const dockerBrokerName = "broker-a"

func TestDockerJava(t *testing.T) {
	c, _ := dockerEnv(t)
	requireJava(t)
	waitDial(t, c.nsAddr, 30*time.Second)
	waitDial(t, c.brokerAddr, 30*time.Second)
	start := time.Now()
	run := fmt.Sprintf("docker-%d", time.Now().UnixNano()%1_000_000)
	go2java, java2go := "go2java-"+run, "java2go-"+run
	createTopic(t, c, go2java)
	createTopic(t, c, java2go)
	sendMixedFromGo(t, c, go2java)
	// Sends of every kind, a clustering consumer pair splitting the queues
	// and the Go/Java exchange in both directions; the topics the JUnit
	// cases use are created by the Java admin client on the broker's
	// advertised address.
	cases := []string{"syncSend", "batchSend", "clusteringSplitsQueues", "goProducerToJavaConsumer", "javaProducerForGoConsumer"}
	runMaven(t, mavenRun{profile: "rmq4", serialize: "JSON", class: "ClientTest#" + strings.Join(cases, "+"),
		props: map[string]string{
			"namesrv": c.nsAddr, "run": run, "cluster": "DefaultCluster", "brokerName": dockerBrokerName,
			"brokerAddr": c.brokerAddr, "go2javaTopic": go2java, "java2goTopic": java2go,
		}})
	t.Run("javaProducerToGoConsumer", func(t *testing.T) { checkMixedInGo(t, c, java2go) })
	t.Logf("Java 4.9.8 client against the 4.x compose cluster: %s", time.Since(start).Round(time.Millisecond))
}

func TestDockerJava5x(t *testing.T) {
	c, _ := dockerEnv(t)
	requireJava(t)
	proxyAddr := dockerProxy(t)
	waitDial(t, c.nsAddr, 30*time.Second)
	waitDial(t, proxyAddr, 30*time.Second)
	start := time.Now()
	topicN, topicF, topicT, topicC := uniq("JN"), uniq("JF"), uniq("JT"), uniq("JC")
	topicD := uniq("JD")
	createTopic(t, c, topicN)
	createTypedTopic(t, c, topicF, "FIFO")
	createTypedTopic(t, c, topicD, "DELAY")
	createTypedTopic(t, c, topicT, "TRANSACTION")
	createTopic(t, c, topicC)
	p4 := newProducer(t, c)
	const count = 6
	for i := 0; i < count; i++ {
		p4.mustSend(t, newMsg(topicC, "c-"+strconv.Itoa(i), "TA"))
	}
	// The SDK's producers (normal, FIFO, delay, transaction commit and
	// rollback) and its SimpleConsumer, through the proxy container.
	runMaven(t, mavenRun{dir: "java-grpc", serialize: "JSON", class: "ProxyTest#producers+simpleConsumer",
		props: map[string]string{"proxy": proxyAddr, "topicN": topicN, "topicF": topicF, "topicD": topicD,
			"topicT": topicT, "topicC": topicC, "count": strconv.Itoa(count), "group": uniq("JSG")}})
	if t.Failed() {
		return
	}
	checkJavaProducers(t, c, "through the proxy container", topicN, topicF, topicD, topicT)
	t.Logf("Java 5.x SDK through the proxy container: %s", time.Since(start).Round(time.Millisecond))
}
