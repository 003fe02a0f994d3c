package controller

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/rocketgo/rocketgo/config"
	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// UPDATE_CONTROLLER_CONFIG writes the whole configuration in force to
// configStorePath, which reads back as the same configuration, and keeps
// the previous file as .bak; a file that cannot be written leaves the
// update in force (Apache's persist logs and answers success).
func TestUpdateConfigPersisted(t *testing.T) {
	c := startSingle(t, nil)
	path := c.cfg.ConfigStorePath
	b := newFakeBroker(t, "cfg")
	update := func(c *Controller, body string) {
		t.Helper()
		resp := b.call(c.Addr(), remoting.UpdateControllerConfig, nil, []byte(body))
		if resp.Code != remoting.Success {
			t.Fatalf("update %q: %d %s", body, resp.Code, resp.Remark)
		}
	}
	readBack := func() Config {
		t.Helper()
		got := DefaultConfig()
		if err := config.Load(path, &got, testutil.Logger()); err != nil {
			t.Fatal(err)
		}
		return got
	}

	update(c, "enableElectUncleanMaster=true\nscanNotActiveBrokerInterval=700\n")
	got := readBack()
	if !got.EnableElectUncleanMaster || got.ScanNotActiveBrokerInterval != 700 {
		t.Fatalf("file after the first update: %+v", got)
	}
	if g, w := config.Pairs(got), config.Pairs(*c.live.Load()); !slices.Equal(g, w) {
		t.Fatalf("file %v\nlive %v", g, w)
	}
	first, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	update(c, "electMasterMaxRetryCount=5\n")
	if got := readBack(); got.ElectMasterMaxRetryCount != 5 || !got.EnableElectUncleanMaster {
		t.Fatalf("file after the second update: %+v", got)
	}
	if bak, err := os.ReadFile(path + ".bak"); err != nil || string(bak) != string(first) {
		t.Fatalf(".bak: %v\n%s\nwant\n%s", err, bak, first)
	}
	resp := b.call(c.Addr(), remoting.GetControllerConfig, nil, nil)
	if !strings.Contains(string(resp.Body), "electMasterMaxRetryCount=5\n") {
		t.Fatalf("GET_CONTROLLER_CONFIG after the update:\n%s", resp.Body)
	}

	// configStorePath under a regular file: not writable.
	blocker := filepath.Join(t.TempDir(), "file")
	if err := os.WriteFile(blocker, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	c2 := startSingle(t, func(cfg *Config) { cfg.ConfigStorePath = filepath.Join(blocker, "controller.properties") })
	update(c2, "electMasterMaxRetryCount=7\n")
	if n := c2.live.Load().ElectMasterMaxRetryCount; n != 7 {
		t.Fatalf("update not in force after a failed write: %d", n)
	}
}
