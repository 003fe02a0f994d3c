package compattest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestGoMQAdminAuth2: the Go mqadmin's ACL 2.0 commands (createUser …
// listAcl, copyUser, copyAcl) against rocketgo brokers with ACL 2.0 on,
// signed with the super user of ${ROCKETMQ_HOME}/conf/tools.yml as Apache's
// tool signs: the steps of TestAuth2MQAdmin, each printing what Apache's
// mqadmin printed there (auth2MQAdminSteps:
// stdout, columns squeezed; a refusal's "CODE: n  DESC: remark" — on
// stderr with exit 1 here, in Apache's stack trace with exit 0 there).
func TestGoMQAdminAuth2(t *testing.T) {
	t.Parallel()
	c := auth2Cluster(t, "rocketgo", "auth2-goadm")
	c2 := auth2Cluster(t, "rocketgo", "auth2-goadm2")
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	tools := "accessKey: " + auth2Super.AccessKey + "\nsecretKey: " + auth2Super.SecretKey + "\n"
	if err := os.WriteFile(filepath.Join(home, "conf", "tools.yml"), []byte(tools), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, s := range auth2MQAdminSteps {
		args := strings.Fields(strings.NewReplacer("-n N", "-n "+c.nsAddr, "-b B2", "-b "+c2.brokerAddr, "-b B", "-b "+c.brokerAddr,
			"-f B", "-f "+c.brokerAddr, "-t B2", "-t "+c2.brokerAddr, "-c C", "-c "+clusterName).Replace(s.args))
		stdout, stderr, rc := runGoAdminHome(t, home, args)
		out := squeeze(strings.NewReplacer(c2.brokerAddr, "B2", c.brokerAddr, "B").Replace(stdout))
		fail := ""
		if m := brokerFailure.FindStringSubmatch(stderr); m != nil {
			fail = "CODE: " + m[1] + "  DESC: " + m[2]
		}
		wantRC := 0
		if s.fail != "" {
			wantRC = 1
		}
		if out != s.out || fail != s.fail || rc != wantRC {
			t.Errorf("mqadmin %s: exit %d\n%s\n%s\nwant exit %d\n%s\n%s", s.args, rc, out, stderr, wantRC, s.out, s.fail)
		}
	}
	// unsigned: the broker refuses the tool
	_, stderr, rc := runGoAdminHome(t, t.TempDir(), []string{"listUser", "-n", c.nsAddr, "-b", c.brokerAddr})
	if rc != 1 || !brokerFailure.MatchString(stderr) {
		t.Errorf("listUser without tools.yml: exit %d, stderr %q", rc, stderr)
	}
}

// runGoAdminHome runs bin/mqadmin with ROCKETMQ_HOME=home: stdout,
// stderr, exit code.
func runGoAdminHome(t *testing.T, home string, args []string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "mqadmin"), args...)
	cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		t.Fatalf("Go mqadmin %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}
