package ha

import (
	"encoding/binary"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
)

// With haAuthSecret, a master serves a slave holding the secret and gives
// a stranger who reports offset 0 (Apache's slave's first words) nothing
// of its commit log; a slave with the wrong secret is refused too.
func TestAuthenticatedLink(t *testing.T) {
	secret := []byte("s3cret")
	m := openStore(t, storeConfig(t.TempDir(), false))
	put(t, m, 0, 200, 2)
	mcfg := testConfig(AsyncMaster)
	mcfg.AuthSecret = secret
	ms := startService(t, mcfg, m)

	// A stranger: connects, reports 0 as an Apache slave does, reads.
	c, err := net.Dial("tcp", ms.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	var report [8]byte
	binary.BigEndian.PutUint64(report[:], 0)
	if _, err := c.Write(report[:]); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(AuthTimeout + 2*time.Second))
	got, _ := io.ReadAll(c)
	if len(got) != len(authMagic)+16 {
		t.Fatalf("a stranger read %d bytes, want only the %d-byte challenge", len(got), len(authMagic)+16)
	}

	// The wrong secret: refused, nothing replicated.
	wrong := openStore(t, storeConfig(t.TempDir(), true))
	wcfg := testConfig(Slave)
	wcfg.HAMasterAddress, wcfg.AuthSecret = ms.Addr(), []byte("guess")
	ws := startService(t, wcfg, wrong)
	time.Sleep(time.Second)
	if wrong.MaxPhyOffset() != 0 {
		t.Fatalf("a slave with the wrong secret copied %d bytes", wrong.MaxPhyOffset())
	}
	stopService(t, ws)

	// The right one replicates.
	sl := openStore(t, storeConfig(t.TempDir(), true))
	scfg := testConfig(Slave)
	scfg.HAMasterAddress, scfg.AuthSecret = ms.Addr(), secret
	startService(t, scfg, sl)
	sameLogs(t, m, sl, 2)
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(ms.Status().Slaves) == 1 })
}

// The exchange itself: Challenge accepts Answer with the same secret only.
func TestChallengeAnswer(t *testing.T) {
	for _, tc := range []struct {
		master, slave string
		ok            bool
	}{{"a", "a", true}, {"a", "b", false}} {
		mc, sc := net.Pipe()
		done := make(chan error, 1)
		go func() { done <- Answer(sc, []byte(tc.slave)); sc.Close() }()
		err := Challenge(mc, []byte(tc.master))
		mc.Close()
		<-done
		if (err == nil) != tc.ok {
			t.Fatalf("master %q slave %q: %v", tc.master, tc.slave, err)
		}
	}
}
