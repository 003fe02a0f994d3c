package compattest

import (
	"strings"
	"testing"
	"time"
)

// The version a server reports: V5_5_0 (513) by default, in every answer
// and in the broker's runtime info as mqadmin clusterList prints it; a
// broker with reportedVersion=V5_3_3 reports 479 and V5_3_3.
func TestReportedVersion(t *testing.T) {
	def := sharedCluster(t)
	set := newClusterConf(t, "version", "reportedVersion=V5_3_3\n")
	for _, c := range []struct {
		addr, desc string
		version    int
	}{{def.brokerAddr, "V5_5_0", 513}, {set.brokerAddr, "V5_3_3", 479}} {
		resp, err := rawInvoke(c.addr, newRequest(28, nil, nil), 5*time.Second) // GET_BROKER_RUNTIME_INFO
		if err != nil || resp.Code != 0 {
			t.Fatalf("runtime info of %s: %v %+v", c.addr, err, resp)
		}
		if resp.Version != c.version {
			t.Errorf("%s answers with version %d, want %d", c.addr, resp.Version, c.version)
		}
		if !strings.Contains(string(resp.Body), `"brokerVersionDesc":"`+c.desc+`"`) {
			t.Errorf("%s runtime info: %s, want brokerVersionDesc %s", c.addr, resp.Body, c.desc)
		}
	}
	resp, err := rawInvoke(def.nsAddr, newRequest(106, nil, nil), 5*time.Second) // GET_BROKER_CLUSTER_INFO
	if err != nil || resp.Version != 513 {
		t.Errorf("name server answers with version %d (%v), want 513", resp.Version, err)
	}
}
