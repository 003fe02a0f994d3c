package proxy

import (
	"testing"

	v2 "github.com/rocketgo/rocketgo/apis/v2"

	"github.com/rocketgo/rocketgo/remoting"
)

// A route from Apache's name server (fastjson's unquoted broker-id keys)
// decodes once quoted.
func TestRouteFromFastjson(t *testing.T) {
	var r route
	if err := json.Unmarshal(remoting.QuoteIntKeys([]byte(`{"brokerDatas":[{"brokerName":"b","brokerAddrs":{0:"h:1",1:"h:2"}}],`+
		`"queueDatas":[{"brokerName":"b","readQueueNums":2,"writeQueueNums":3,"perm":6}]}`)), &r); err != nil {
		t.Fatal(err)
	}
	if r.master("b") != "h:1" || len(r.writeQueues()) != 3 {
		t.Fatalf("route decoded as %+v / %+v (master %q, %d write queues)", r.Brokers, r.Queues, r.master("b"), len(r.writeQueues()))
	}
}

// RouteActivity.genMessageQueueFromQueueData: read-only, write-only, then
// read-write queues, ids counted across them; NONE when nothing is allowed.
func TestQueuesOf(t *testing.T) {
	topic := &v2.Resource{Name: "T"}
	b := &v2.Broker{Name: "b"}
	types := []v2.MessageType{v2.MessageType_NORMAL}
	for _, tc := range []struct {
		name         string
		perm, rn, wn int32
		want         []v2.Permission
	}{
		{"rw equal", 6, 2, 2, []v2.Permission{v2.Permission_READ_WRITE, v2.Permission_READ_WRITE}},
		{"more read", 6, 3, 1, []v2.Permission{v2.Permission_READ, v2.Permission_READ, v2.Permission_READ_WRITE}},
		{"more write", 6, 1, 2, []v2.Permission{v2.Permission_WRITE, v2.Permission_READ_WRITE}},
		{"write only", 2, 4, 1, []v2.Permission{v2.Permission_WRITE}},
		{"read only", 4, 1, 4, []v2.Permission{v2.Permission_READ}},
		{"none", 0, 2, 3, []v2.Permission{v2.Permission_NONE, v2.Permission_NONE, v2.Permission_NONE}},
		{"inherit only", 1, 2, 2, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := queuesOf(tc.perm, tc.rn, tc.wn, topic, b, types)
			if len(got) != len(tc.want) {
				t.Fatalf("%d queues, want %d", len(got), len(tc.want))
			}
			for i, q := range got {
				if q.GetId() != int32(i) || q.GetPermission() != tc.want[i] {
					t.Fatalf("queue %d: id %d perm %v, want id %d perm %v", i, q.GetId(), q.GetPermission(), i, tc.want[i])
				}
			}
		})
	}
}
