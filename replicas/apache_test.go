package replicas

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/remoting"
)

// startApacheController runs Apache 5.3.3's controller (one DLedger node,
// compat-tests/reference/run.sh controller) and returns its address once
// it serves. Needs Java and Maven: enabled by ROCKETGO_JAVA=1 and
// ROCKETGO_CONTROLLER=1 (make test-controller).
func startApacheController(t *testing.T) string {
	t.Helper()
	if os.Getenv("ROCKETGO_JAVA") == "" || os.Getenv("ROCKETGO_CONTROLLER") == "" {
		t.Skip("Apache's controller runs with ROCKETGO_JAVA=1 ROCKETGO_CONTROLLER=1 (make test-controller)")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	addr := "127.0.0.1:" + strconv.Itoa(port)
	dir := t.TempDir()
	conf := filepath.Join(dir, "controller.conf")
	if err := os.WriteFile(conf, []byte(fmt.Sprintf("controllerDLegerGroup=g\ncontrollerDLegerPeers=n0-%s\ncontrollerDLegerSelfId=n0\ncontrollerStorePath=%s\nscanInactiveMasterInterval=1000\nscanNotActiveBrokerInterval=1000\n",
		addr, filepath.Join(dir, "store"))), 0o644); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs(filepath.Join("..", "compat-tests", "reference", "run.sh"))
	if err != nil {
		t.Fatal(err)
	}
	logf, err := os.Create(filepath.Join(dir, "controller.out"))
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(script, "controller", conf, dir)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		_ = cmd.Wait()
		logf.Close()
		if t.Failed() {
			b, _ := os.ReadFile(logf.Name())
			t.Logf("Apache controller output:\n%s", b)
		}
	})
	// Serving once it leads: a read answers something else than NOT_LEADER.
	rc := remoting.NewClient(testutil.Logger())
	defer rc.Close()
	testutil.WaitFor(t, 120*time.Second, func() bool {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		r, err := rc.Invoke(ctx, addr, remoting.NewRequest(remoting.ControllerGetReplicaInfo, map[string]string{"brokerName": "warmup"}, nil))
		if err != nil {
			time.Sleep(500 * time.Millisecond)
		}
		return err == nil && r.Code != remoting.ControllerNotLeader
	})
	return addr
}

// The same registration, election, restart, resume, refusals and role
// change after the master's heartbeats stop through
// Apache 5.3.3's controller: rocketgo brokers register with it as Apache
// brokers do (the scenarios use different broker names, so they share it).
func TestRegisterWithApacheController(t *testing.T) {
	addr := startApacheController(t)
	t.Run("register", func(t *testing.T) { registerScenario(t, addr) })
	t.Run("resume", func(t *testing.T) { resumeScenario(t, addr) })
	t.Run("role", func(t *testing.T) { roleScenario(t, addr) })
}
