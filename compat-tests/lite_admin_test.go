package compattest

import (
	"strings"
	"testing"
	"time"

	"github.com/apache/rocketmq-client-go/v2/primitive"
)

// TestLiteAdminDifferential: Apache 5.5's mqadmin lite subcommands
// (getParentTopicInfo, getLiteTopicInfo, getLiteClientInfo,
// getLiteGroupInfo, getBrokerLiteInfo) print the same, broker names and
// addresses aside, for a rocketgo broker and an Apache 5.5 broker after the
// same scenario: a LITE parent, a lite group, messages for two lite topics
// (the 4.x Go client with __LITE_TOPIC), and a client subscribed to one of
// them by LITE_SUBSCRIPTION_CTL.
func TestLiteAdminDifferential(t *testing.T) {
	requireJava(t)
	t.Parallel()
	cp := referenceClasspath(t)
	const topic, group, client = "LiteAdminP", "LiteAdminG", "127.0.0.1@lite-admin@1"
	outs := map[string][]string{}
	for _, kind := range []string{"rocketgo", "apache"} {
		// Short names: mqadmin cuts broker names at 40 characters.
		c := startTargetBroker(t, kind, uniq("lad-"+kind), liteBrokerConf).c
		createTypedTopic(t, c, topic, "LITE")
		createLiteGroup(t, c, group, topic, "")
		p := newProducer(t, c)
		for i, lite := range []string{"a", "a", "a", "b"} {
			m := primitive.NewMessage(topic, []byte(lite+string(rune('0'+i))))
			m.WithProperty("__LITE_TOPIC", lite)
			p.mustSend(t, m)
		}
		body := `{"subscriptionSet":[{"action":"PARTIAL_ADD","clientId":"` + client + `","group":"` + group +
			`","topic":"` + topic + `","liteTopicSet":["a"],"version":1}]}`
		resp, err := rawInvoke(c.brokerAddr, newRequest(200071, map[string]string{}, []byte(body)), 5*time.Second)
		if err != nil || resp.Code != 0 {
			t.Fatalf("%s: LITE_SUBSCRIPTION_CTL: %v %+v", kind, err, resp)
		}
		home := t.TempDir()
		for _, args := range [][]string{
			{"getParentTopicInfo", "-p", topic},
			{"getLiteTopicInfo", "-p", topic, "-l", "a"},
			{"getLiteClientInfo", "-p", topic, "-g", group, "-c", client},
			{"getLiteGroupInfo", "-p", topic, "-g", group, "-l", "a"},
			{"getBrokerLiteInfo", "-c", clusterName},
		} {
			out := mqadmin(t, cp, home, append(args, "-n", c.nsAddr)...)
			lines := normaliseAdmin(out, c.brokerName, false)
			if args[0] == "getBrokerLiteInfo" {
				// #CQTableSize and #OffsetTableSize count every topic: Apache
				// makes a consume queue object when one is only looked up,
				// and rocketgo's revive commits its offset at start.
				for i, l := range lines {
					if f := strings.Fields(l); len(f) == 9 && f[0] == "ADDR" {
						f[6], f[7] = "N", "N"
						lines[i] = strings.Join(f, " ")
					}
				}
			}
			outs[kind] = append(outs[kind], "$ "+strings.Join(args, " "))
			outs[kind] = append(outs[kind], lines...)
		}
	}
	got, want := strings.Join(outs["rocketgo"], "\n"), strings.Join(outs["apache"], "\n")
	t.Logf("apache:\n%s", want)
	if got != want {
		t.Errorf("mqadmin differs\nrocketgo:\n%s\napache:\n%s", got, want)
	}
}
