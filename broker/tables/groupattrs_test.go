package tables

import (
	"maps"
	"testing"

	"github.com/rocketgo/rocketgo/remoting"
)

// Group attributes alter as Apache's AttributeUtil: create takes "+" only,
// an update adds, changes and deletes, and each refusal is Apache's text.
func TestAlterGroupAttributes(t *testing.T) {
	cases := []struct {
		name    string
		create  bool
		current map[string]string
		req     map[string]string
		want    map[string]string
		remark  string
	}{
		{"create", true, nil, map[string]string{"+priority.factor": "40"}, map[string]string{"priority.factor": "40"}, ""},
		{"create without attributes", true, nil, nil, map[string]string{}, ""},
		{"create with delete", true, nil, map[string]string{"-priority.factor": ""}, nil,
			"only add attribute is supported while creating topic. key: priority.factor"},
		{"create without prefix", true, nil, map[string]string{"priority.factor": "1"}, nil,
			"only add attribute is supported while creating topic. key: riority.factor"},
		{"update", false, map[string]string{"priority.factor": "40"}, map[string]string{"+priority.factor": "0"},
			map[string]string{"priority.factor": "0"}, ""},
		{"update keeps", false, map[string]string{"priority.factor": "40"}, nil, map[string]string{"priority.factor": "40"}, ""},
		{"delete", false, map[string]string{"priority.factor": "40"}, map[string]string{"-priority.factor": ""}, map[string]string{}, ""},
		{"delete absent", false, nil, map[string]string{"-priority.factor": ""}, nil, "attempt to delete a nonexistent key: priority.factor"},
		{"wrong format", false, nil, map[string]string{"*priority.factor": "1"}, nil, "wrong format key: priority.factor"},
		{"unknown", true, nil, map[string]string{"+lite.bind": "t"}, nil, "unsupported key: lite.bind"},
		{"lite group", true, nil, map[string]string{"+lite.bind.topic": "P", "+lite.sub.model": "Exclusive",
			"+lite.sub.reset.offset.exclusive": "TRUE", "+lite.sub.client.quota": "-1", "+lite.sub.wildcard": ""},
			map[string]string{"lite.bind.topic": "P", "lite.sub.model": "Exclusive",
				"lite.sub.reset.offset.exclusive": "TRUE", "lite.sub.client.quota": "-1", "lite.sub.wildcard": ""}, ""},
		{"lite model", true, nil, map[string]string{"+lite.sub.model": "exclusive"}, nil, "value is not in set: [Shared, Exclusive]"},
		{"lite boolean", true, nil, map[string]string{"+lite.sub.reset.offset.unsubscribe": "yes"}, nil, "boolean attribute format is wrong."},
		{"lite events", true, nil, map[string]string{"+lite.sub.client.max.event.cnt": "9"}, nil,
			"value is not in range(10, 9223372036854775807)"},
		{"out of range", true, nil, map[string]string{"+priority.factor": "101"}, nil, "value is not in range(0, 100)"},
		{"not a number", true, nil, map[string]string{"+priority.factor": "x"}, nil, `For input string: "x"`},
		{"format", true, nil, map[string]string{"+a-b": "1"}, nil, "kv string format wrong."},
		{"empty key", true, nil, map[string]string{"": "1"}, nil, "kv string format wrong."},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			cur := maps.Clone(c.current)
			got, err := alterGroupAttributes(c.create, cur, c.req)
			if c.remark != "" {
				r, ok := err.(*remoting.Refusal)
				if !ok || r.Code != remoting.SystemError || r.Remark != c.remark {
					t.Fatalf("err %v, want SYSTEM_ERROR %q", err, c.remark)
				}
				return
			}
			if err != nil || !maps.Equal(got, c.want) {
				t.Fatalf("got %v, %v; want %v", got, err, c.want)
			}
			if !maps.Equal(cur, c.current) {
				t.Fatalf("current changed to %v", cur)
			}
		})
	}
}

func TestPriorityFactor(t *testing.T) {
	for v, want := range map[string]int{"": 100, "x": 100, "0": 0, "55": 55, "100": 100} {
		gc := GroupConfig{Attributes: map[string]string{}}
		if v != "" {
			gc.Attributes[AttrPriorityFactor] = v
		}
		if got := gc.PriorityFactor(); got != want {
			t.Errorf("priority.factor %q: %d, want %d", v, got, want)
		}
	}
}

func TestLiteGroupAttributes(t *testing.T) {
	plain := GroupConfig{Attributes: map[string]string{}}
	if plain.LiteBindTopic() != "" || plain.LiteExclusive() || plain.LiteWildcard() || plain.LiteResetOnExclusive() ||
		plain.LiteClientQuota() != 2000 || plain.LiteMaxEventCount() != -1 {
		t.Errorf("defaults of a plain group: %q %v %v %v %d %d", plain.LiteBindTopic(), plain.LiteExclusive(),
			plain.LiteWildcard(), plain.LiteResetOnExclusive(), plain.LiteClientQuota(), plain.LiteMaxEventCount())
	}
	gc := GroupConfig{Attributes: map[string]string{AttrLiteBindTopic: "P", AttrLiteSubModel: "Exclusive",
		AttrLiteResetOnUnsubscribe: "True", AttrLiteClientQuota: "99999999999", AttrLiteMaxEventCount: "50",
		AttrLiteWildcard: ""}}
	if gc.LiteBindTopic() != "P" || !gc.LiteExclusive() || !gc.LiteWildcard() || !gc.LiteResetOnUnsubscribe() ||
		gc.LiteClientQuota() != 1<<31-1 || gc.LiteMaxEventCount() != 50 {
		t.Errorf("lite group: %+v", gc.Attributes)
	}
}

func TestTopicAttributes(t *testing.T) {
	for _, c := range []struct{ key, value, remark string }{
		{"message.type", "LITE", ""},
		{"message.type", "lite", "value is not in set: [UNSPECIFIED, MIXED, TRANSACTION, PRIORITY, FIFO, DELAY, LITE, NORMAL]"},
		{"lite.topic.expiration", "43200", ""},
		{"lite.topic.expiration", "-2", "value is not in range(-1, 43200)"},
		{"other", "x", ""},
	} {
		if got := VerifyTopicAttribute(c.key, c.value); got != c.remark {
			t.Errorf("%s=%s: %q, want %q", c.key, c.value, got, c.remark)
		}
	}
	tc := TopicConfig{Attributes: map[string]string{AttrMessageType: "LITE", AttrLiteExpiration: "60"}}
	if !tc.Lite() || tc.LiteExpiration() != 60 {
		t.Errorf("LITE topic: %v %d", tc.Lite(), tc.LiteExpiration())
	}
	tc.Attributes[AttrMessageType] = "NORMAL"
	if tc.Lite() || tc.LiteExpiration() != -1 {
		t.Errorf("NORMAL topic: %v %d", tc.Lite(), tc.LiteExpiration())
	}
}
