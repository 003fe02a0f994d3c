package controller

import (
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// TestHostileRequests sends what a broken or hostile client could to a real
// leader: each is answered with Apache's code, nothing panics or hangs.
func TestHostileRequests(t *testing.T) {
	g := startGroup(t, nil)
	leader := g.addrs()[g.leader()]
	b := newFakeBroker(t, "b")
	tests := []struct {
		name   string
		code   int32
		ext    map[string]string
		body   []byte
		want   int32
		remark string
	}{
		{"heartbeat without id", remoting.BrokerHeartbeat, map[string]string{"clusterName": "c", "brokerName": "b", "brokerAddr": "a"}, nil,
			remoting.ControllerInvalidRequest, "Heart beat with empty brokerId"},
		// Apache's header decoder leaves what is missing or does not parse
		// at its default (and logs it): these heartbeats are accepted.
		{"heartbeat without cluster", remoting.BrokerHeartbeat, map[string]string{"brokerName": "b", "brokerAddr": "a", "brokerId": "1"}, nil, remoting.Success, "Heart beat success"},
		{"heartbeat bad epoch", remoting.BrokerHeartbeat, map[string]string{"clusterName": "c", "brokerName": "b", "brokerAddr": "a", "brokerId": "1", "epoch": "x"}, nil, remoting.Success, "Heart beat success"},
		{"alter without body", remoting.ControllerAlterSyncStateSet, map[string]string{"brokerName": "b", "masterBrokerId": "1", "masterEpoch": "1"}, nil, remoting.SystemError, ""},
		{"alter bad json", remoting.ControllerAlterSyncStateSet, map[string]string{"brokerName": "b", "masterBrokerId": "1", "masterEpoch": "1"}, []byte(`{"syncStateSet":[1,`), remoting.SystemError, ""},
		{"alter unknown set", remoting.ControllerAlterSyncStateSet, map[string]string{"brokerName": "b", "masterBrokerId": "1", "masterEpoch": "1"}, []byte(`{"syncStateSet":[1],"syncStateSetEpoch":1}`),
			remoting.ControllerAlterSyncFailed, "Broker metadata is not existed"},
		{"elect overflowing id is -1", remoting.ControllerElectMaster, map[string]string{"clusterName": "c", "brokerName": "b", "brokerId": "99999999999999999999", "designateElect": "false"}, nil,
			remoting.ControllerNeedToBeRegistered, "Broker hasn't been registered"},
		{"register without name", remoting.ControllerRegisterBroker, map[string]string{"brokerId": "1"}, nil, remoting.SystemError, ""},
		{"update a black-listed key", remoting.UpdateControllerConfig, nil, []byte("enableElectUncleanMaster=true\nconfigStorePath=/x\n"), remoting.NoPermission, "Can not update config in black list."},
		{"update to an invalid config", remoting.UpdateControllerConfig, nil, []byte("scanNotActiveBrokerInterval=0\n"), remoting.SystemError, ""},
		{"update the unclean switch", remoting.UpdateControllerConfig, nil, []byte("enableElectUncleanMaster=true\nnoSuchKey=1\n"), remoting.Success, ""},
		{"elect unknown set", remoting.ControllerElectMaster, map[string]string{"clusterName": "c", "brokerName": "b", "brokerId": "1", "designateElect": "false"}, nil,
			remoting.ControllerNeedToBeRegistered, "Broker hasn't been registered"},
		{"sync data without body", remoting.ControllerGetSyncStateData, nil, nil, remoting.SystemError, "not set any response code"},
		{"sync data bad json", remoting.ControllerGetSyncStateData, nil, []byte(`["a"`), remoting.SystemError, ""},
		{"replica info unknown", remoting.ControllerGetReplicaInfo, map[string]string{"brokerName": "b"}, nil, remoting.ControllerMetadataNotExist, "Broker metadata is not existed"},
		{"epoch cache is a broker's code", remoting.GetBrokerEpochCache, nil, nil, remoting.RequestCodeNotSupported, " request type 1007 not supported"},
		{"clean unknown set", remoting.CleanBrokerData, map[string]string{"brokerName": "b"}, nil, remoting.ControllerInvalidCleanData, "Broker b is not existed,clean broker data failure."},
		{"apply id 5 first", remoting.ControllerApplyBrokerID, map[string]string{"clusterName": "c", "brokerName": "b", "appliedBrokerId": "5", "registerCheckCode": "a;1"}, nil,
			remoting.ControllerBrokerIDInvalid, "Broker-set: b hasn't been registered in controller, but broker try to apply brokerId: 5"},
		{"apply without check code", remoting.ControllerApplyBrokerID, map[string]string{"clusterName": "c", "brokerName": "b", "appliedBrokerId": "1"}, nil, remoting.SystemError, ""},
		{"register unknown set", remoting.ControllerRegisterBroker, map[string]string{"clusterName": "c", "brokerName": "b", "brokerId": "1", "brokerAddress": "a"}, nil,
			remoting.ControllerNeedToBeRegistered, "Broker-set: b hasn't been registered in controller"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := b.call(leader, tt.code, tt.ext, tt.body)
			if r.Code != tt.want || tt.remark != "" && r.Remark != tt.remark {
				t.Fatalf("got %d %q, want %d %q", r.Code, r.Remark, tt.want, tt.remark)
			}
		})
	}
	if r := b.call(leader, remoting.GetControllerConfig, nil, nil); r.Code != remoting.Success ||
		!strings.Contains(string(r.Body), "enableElectUncleanMaster=true\n") || !strings.Contains(string(r.Body), "controllerMaxHeartbeats=65536\n") {
		t.Fatalf("config after the update: %d %s", r.Code, r.Body)
	}
	if r := b.call(leader, remoting.ControllerGetSyncStateData, nil, []byte(`["nope"]`)); r.Code != remoting.Success || string(r.Body) != `{"replicasInfoTable":{}}` {
		t.Fatalf("sync data of unknown set: %d %s", r.Code, r.Body)
	}
}
