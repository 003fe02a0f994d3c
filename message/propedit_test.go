package message

import "testing"

func props(kv ...string) string {
	var b []byte
	for i := 0; i+1 < len(kv); i += 2 {
		b = AppendProperty(b, kv[i], kv[i+1])
	}
	return string(b)
}

// A deleted pair goes, a set one moves to the end, the rest keep their
// order; a last pair without its separator is read too.
func TestPropertyEdits(t *testing.T) {
	p := props("A", "1", "B", "2", "C", "3")
	if got := DeleteProperties(p, "B", "X"); got != props("A", "1", "C", "3") {
		t.Errorf("delete B = %q", got)
	}
	if got := DeleteProperties("", "A"); got != "" {
		t.Errorf("delete from nothing = %q", got)
	}
	if got := SetProperties(p, "A", "9", "D", "4"); got != props("B", "2", "C", "3", "A", "9", "D", "4") {
		t.Errorf("set A, D = %q", got)
	}
	if got := DeleteProperties("A\x01x", "B"); got != props("A", "x") {
		t.Errorf("unterminated last pair: %q", got)
	}
}
