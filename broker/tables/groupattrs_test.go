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
		{"unknown", true, nil, map[string]string{"+lite.bind.topic": "t"}, nil, "unsupported key: lite.bind.topic"},
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
