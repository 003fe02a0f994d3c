package broker

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"
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

// TestColdDataFlowCtr: the table as GET_COLD_DATA_FLOW_CTR_INFO prints it.
func TestColdDataFlowCtr(t *testing.T) {
	b, _ := testBroker(t, t.TempDir(), nil)
	if err := b.UpdateColdDataFlowCtr([]byte("g2=5\ng1=7\nbad=x\n"), zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	b.RemoveColdDataFlowCtr([]byte("g2"))
	got := string(b.ColdDataFlowCtrInfo())
	want := `{"runtimeTable":{},"configTable":{"g1":7},"cgColdReadThreshold":3145728,"globalColdReadThreshold":104857600,"globalAcc":0}`
	if got != want {
		t.Errorf("info %s, want %s", got, want)
	}
	if _, err := b.SetCommitLogReadMode(map[string]string{"READ_AHEAD_MODE": "1"}); err != nil {
		t.Errorf("read mode 1: %v", err)
	}
	if _, err := b.SetCommitLogReadMode(map[string]string{"READ_AHEAD_MODE": "3"}); err == nil || !strings.Contains(err.Error(), "value error") {
		t.Errorf("read mode 3: %v", err)
	}
}
