package controller

import (
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// FuzzDecoders feeds arbitrary header fields and bodies to every request
// decoder, and what decodes to the rules over a small state: no panic, and
// a decoded SyncStateSet re-encodes to JSON that decodes to the same set.
func FuzzDecoders(f *testing.F) {
	f.Add("brokerName=b\nmasterBrokerId=1\nmasterEpoch=1\nclusterName=c\nbrokerId=1\ndesignateElect=true", []byte(`{"syncStateSet":[1,2],"syncStateSetEpoch":1}`))
	f.Add("brokerName=b\nappliedBrokerId=9223372036854775807\nregisterCheckCode=;", []byte(`["b","b"]`))
	f.Add("brokerName=\nbrokerControllerIdsToClean=1;;2;\nisCleanLivingBroker=TRUE\nepoch=-2147483648", []byte(`null`))
	f.Add("username=u\nAccessKey=admin", []byte(`{"password":"p","userType":"Super","userStatus":"disable"}`))
	f.Add("clusterName=c\nbrokerAddr=a\nbrokerName=b\nbrokerId=-1\nmaxOffset=-9223372036854775808\nheartbeatTimeoutMills=0", []byte(`{"syncStateSet":null}`))
	f.Fuzz(func(t *testing.T, fields string, body []byte) {
		req := &remoting.Command{Body: body}
		for _, line := range strings.Split(fields, "\n") {
			k, v, _ := strings.Cut(line, "=")
			req.ExtFields = append(req.ExtFields, remoting.Field{Key: k, Value: v})
		}
		ru := setOf(t, 2, 1, []int64{1}, true, map[int64]liveInfo{2: {}})
		if a, err := decodeAlter(req); err == nil {
			ru.alterSyncStateSet(a.BrokerName, a.MasterID, a.MasterEpoch, a.Body)
			back, err := decodeSyncStateSet(encodeSyncStateSet(sortedIDs(toSet(a.Body.SyncStateSet)), a.Body.SyncStateSetEpoch))
			if err != nil || len(toSet(back.SyncStateSet)) != len(toSet(a.Body.SyncStateSet)) {
				t.Fatalf("SyncStateSet round trip: %v %v", err, back)
			}
		}
		if e, err := decodeElect(req); err == nil {
			ru.electMaster(e)
		}
		if r, err := decodeRegister(req); err == nil {
			ru.registerBroker(r.Cluster, r.BrokerName, r.BrokerID, r.Addr)
		}
		if a, err := decodeApply(req); err == nil {
			ru.applyBrokerID(a.Cluster, a.BrokerName, a.BrokerID, a.CheckCode)
		}
		if c, err := decodeClean(req); err == nil {
			ru.cleanBrokerData(c)
		}
		if h, ok := decodeHeartbeat(req); ok {
			ru.hb.onHeartbeat(h, nil)
		}
		if u, fail := decodeUser(req); fail == nil {
			if r := ru.editUser(u, true); r.code == remoting.Success && (len(r.events) != 1 || r.events[0].User.Username != u.Username) {
				t.Fatalf("create %q: %+v", u.Username, r)
			}
			ru.editUser(u, false)
		}
		if names, err := decodeBrokerNames(body); err == nil {
			ru.syncStateData(names)
		}
	})
}
