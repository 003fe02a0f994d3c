package admin

import (
	"strings"
	"testing"

	"github.com/rs/zerolog"

	"github.com/rocketgo/rocketgo/store/storetest"
)

// TestColdDataFlowCtr: the table as GET_COLD_DATA_FLOW_CTR_INFO prints it,
// and the read-ahead modes SET_COMMITLOG_READ_MODE takes.
func TestColdDataFlowCtr(t *testing.T) {
	s := New(Deps{Store: storetest.Open(t, t.TempDir(), nil)}, zerolog.Nop())
	if err := s.UpdateColdDataFlowCtr([]byte("g2=5\ng1=7\nbad=x\n"), zerolog.Nop()); err != nil {
		t.Fatal(err)
	}
	s.RemoveColdDataFlowCtr([]byte("g2"))
	got := string(s.ColdDataFlowCtrInfo())
	want := `{"runtimeTable":{},"configTable":{"g1":7},"cgColdReadThreshold":3145728,"globalColdReadThreshold":104857600,"globalAcc":0}`
	if got != want {
		t.Errorf("info %s, want %s", got, want)
	}
	if _, err := s.SetCommitLogReadMode(map[string]string{"READ_AHEAD_MODE": "1"}); err != nil {
		t.Errorf("read mode 1: %v", err)
	}
	if _, err := s.SetCommitLogReadMode(map[string]string{"READ_AHEAD_MODE": "3"}); err == nil || !strings.Contains(err.Error(), "value error") {
		t.Errorf("read mode 3: %v", err)
	}
}
