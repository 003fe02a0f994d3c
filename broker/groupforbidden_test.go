package broker

import (
	"testing"
)

// TestGroupForbiddenPersisted: the read bit set and cleared as Apache's
// table does, kept across a restart in subscriptionGroup.json.
func TestGroupForbiddenPersisted(t *testing.T) {
	dir := t.TempDir()
	b, stop := testBroker(t, dir, nil)
	no := false
	if gf, err := b.Admin.UpdateGroupForbidden("g", "t", &no); err != nil || gf.Readable {
		t.Fatalf("forbid: %+v %v", gf, err)
	}
	stop()
	b, _ = testBroker(t, dir, nil)
	if gf, _ := b.Admin.UpdateGroupForbidden("g", "t", nil); gf.Readable {
		t.Errorf("after a restart the group reads again: %+v", gf)
	}
	yes := true
	if gf, _ := b.Admin.UpdateGroupForbidden("g", "t", &yes); !gf.Readable {
		t.Errorf("cleared, still forbidden: %+v", gf)
	}
	if len(b.Groups.ForbiddenCopy()) != 0 {
		t.Errorf("the cleared group stays in the table: %v", b.Groups.ForbiddenCopy())
	}
}
