package tx

import (
	"bytes"
	"strconv"
	"testing"
)

func TestOpOffsets(t *testing.T) {
	for _, tc := range []struct {
		body string
		want []int64
	}{
		{"17", []int64{17}},                // 4.9 / 5.0
		{"17,18,21,", []int64{17, 18, 21}}, // 5.1+
		{"", nil},
		{",,", nil},
		{"x,5,", []int64{5}},
		{"-1,3", []int64{3}},
		{"99999999999999999999,4", []int64{4}},
	} {
		var got []int64
		opOffsets([]byte(tc.body), func(v int64) { got = append(got, v) })
		if len(got) != len(tc.want) {
			t.Errorf("%q: %v, want %v", tc.body, got, tc.want)
			continue
		}
		for i := range got {
			if got[i] != tc.want[i] {
				t.Errorf("%q: %v, want %v", tc.body, got, tc.want)
			}
		}
	}
	if got := opProgress([]int64{5, 3, 4, 7}, 3); got != 6 {
		t.Errorf("opProgress = %d, want 6", got)
	}
}

// Op bodies come from the store, written by either broker: parsing never
// panics and yields only offsets a body spells.
func FuzzOpOffsets(f *testing.F) {
	for _, s := range []string{"17", "17,18,21,", "", ",", "-1,3", "x,5,", "99999999999999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		opOffsets(body, func(v int64) {
			if v < 0 || !bytes.Contains(body, []byte(strconv.FormatInt(v, 10))) {
				t.Fatalf("%q gave %d", body, v)
			}
		})
	})
}
