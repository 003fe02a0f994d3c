package adminclient

import (
	"slices"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// TestClusterBrokers: a cluster's brokers by name, each master and its
// slaves by id, from the name server's answer with fastjson's bare keys.
func TestClusterBrokers(t *testing.T) {
	body := `{"brokerAddrTable":{"b":{"cluster":"C","brokerName":"b","brokerAddrs":{2:"h:3",0:"h:1",1:"h:2"}},` +
		`"a":{"cluster":"C","brokerName":"a","brokerAddrs":{1:"g:2"}}},"clusterAddrTable":{"C":["b","a"]}}`
	var ci ClusterInfo
	if err := json.Unmarshal(remoting.QuoteIntKeys([]byte(body)), &ci); err != nil {
		t.Fatal(err)
	}
	bs, err := ci.Brokers("C")
	if err != nil {
		t.Fatal(err)
	}
	if len(bs) != 2 || bs[0].Name != "a" || bs[0].Master != "" || bs[1].Master != "h:1" || !slices.Equal(bs[1].Slaves, []string{"h:2", "h:3"}) {
		t.Fatalf("brokers %+v", bs)
	}
	if _, err := ci.Brokers("X"); err == nil {
		t.Fatal("unknown cluster accepted")
	}
}
