package processor

import (
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/broker"
	"github.com/rocketgo/rocketgo/remoting"
)

// Outside controller mode GET_BROKER_EPOCH_CACHE is Apache's SYSTEM_ERROR
// and NOTIFY_BROKER_ROLE_CHANGED is ignored with SUCCESS.
func TestControllerCodesOutsideControllerMode(t *testing.T) {
	b, cl := serveBroker(t, nil, nil)
	resp := invoke(t, cl, b, remoting.NewRequest(remoting.GetBrokerEpochCache, nil, nil))
	if resp.Code != remoting.SystemError || resp.Remark != "this request only for controllerMode " {
		t.Fatalf("1007: %d %q", resp.Code, resp.Remark)
	}
	resp = invoke(t, cl, b, remoting.NewRequest(remoting.NotifyBrokerRoleChanged, map[string]string{"masterBrokerId": "1",
		"masterAddress": "127.0.0.1:1", "masterEpoch": "9", "syncStateSetEpoch": "1"}, []byte(`{"syncStateSet":[1],"syncStateSetEpoch":1}`)))
	if resp.Code != remoting.Success || b.IsSlave() || b.Config().BrokerID != 0 {
		t.Fatalf("1008 outside controller mode: %d %q, slave %v", resp.Code, resp.Remark, b.IsSlave())
	}
}

// A controller-mode broker whose controllers do not answer stays a slave
// without a role: sends refused, a push before registration ignored, a
// malformed push refused with SYSTEM_ERROR, the epoch cache empty.
func TestControllerModeBeforeRegistration(t *testing.T) {
	b, cl := serveBroker(t, func(c *broker.Config) {
		c.Controller.EnableControllerMode = true
		c.Controller.ControllerAddr = "127.0.0.1:1" // nothing listens there
	}, nil)
	if !b.IsSlave() || !b.ControllerMode() || b.ControllerBrokerID() != -1 {
		t.Fatalf("slave %v, controller mode %v, controller id %d", b.IsSlave(), b.ControllerMode(), b.ControllerBrokerID())
	}
	resp := invoke(t, cl, b, sendV2("TopicCtl", []byte("x")))
	if resp.Code != remoting.SystemBusy {
		t.Fatalf("send before a role: %d %q", resp.Code, resp.Remark)
	}
	push := map[string]string{"masterBrokerId": "1", "masterAddress": "127.0.0.1:1", "masterEpoch": "3", "syncStateSetEpoch": "1"}
	resp = invoke(t, cl, b, remoting.NewRequest(remoting.NotifyBrokerRoleChanged, push, []byte(`{"syncStateSet":[1],"syncStateSetEpoch":1}`)))
	if resp.Code != remoting.Success || !b.IsSlave() {
		t.Fatalf("push before registration: %d %q, slave %v", resp.Code, resp.Remark, b.IsSlave())
	}
	for _, bad := range []struct {
		field, value string
		body         string
	}{
		{"masterEpoch", "x", `{}`},
		{"masterBrokerId", "1e9", `{}`},
		{"masterEpoch", "3", `{"syncStateSet":"nope"`},
	} {
		h := map[string]string{}
		for k, v := range push {
			h[k] = v
		}
		h[bad.field] = bad.value
		resp = invoke(t, cl, b, remoting.NewRequest(remoting.NotifyBrokerRoleChanged, h, []byte(bad.body)))
		if resp.Code != remoting.SystemError {
			t.Errorf("push with %s=%s body %s: %d %q", bad.field, bad.value, bad.body, resp.Code, resp.Remark)
		}
	}
	resp = invoke(t, cl, b, remoting.NewRequest(remoting.GetBrokerEpochCache, nil, nil))
	if resp.Code != remoting.Success || !strings.Contains(string(resp.Body), `"brokerName":"b"`) ||
		!strings.Contains(string(resp.Body), `"epochList":[]`) {
		t.Fatalf("1007: %d %s", resp.Code, resp.Body)
	}
}
