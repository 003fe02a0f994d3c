package ha

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/rs/zerolog"

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
	if len(got) != ChallengeSize {
		t.Fatalf("a stranger read %d bytes, want only the %d-byte challenge", len(got), ChallengeSize)
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

// The exchange itself: each side accepts the other only with the same
// secret.
func TestChallengeAnswer(t *testing.T) {
	for _, tc := range []struct {
		master, slave string
		ok            bool
	}{{"a", "a", true}, {"a", "b", false}} {
		mc, sc := net.Pipe()
		done := make(chan error, 1)
		go func() { done <- Answer(sc, []byte(tc.slave)) }()
		err := Challenge(mc, []byte(tc.master))
		if err != nil {
			mc.Close() // the slave waits for a proof that will not come
		}
		serr := <-done
		mc.Close()
		sc.Close()
		if (err == nil) != tc.ok || (serr == nil) != tc.ok {
			t.Fatalf("master %q slave %q: master %v, slave %v", tc.master, tc.slave, err, serr)
		}
	}
}

// A master that does not hold the secret (it read a challenge elsewhere
// and plays it back) is refused by the slave before it appends anything.
func TestSlaveRefusesImpostorMaster(t *testing.T) {
	mc, sc := net.Pipe()
	defer mc.Close()
	done := make(chan error, 1)
	go func() { done <- Answer(sc, []byte("s3cret")); sc.Close() }()
	var msg [ChallengeSize]byte
	copy(msg[:], authMagic[:])
	if _, err := mc.Write(msg[:]); err != nil {
		t.Fatal(err)
	}
	var answer [nonceSize + sha256.Size]byte
	if _, err := io.ReadFull(mc, answer[:]); err != nil {
		t.Fatal(err)
	}
	// Its best guess: the slave's own proof sent back.
	if _, err := mc.Write(answer[nonceSize:]); err != nil {
		t.Fatal(err)
	}
	if err := <-done; !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("the slave accepted a master without the secret: %v", err)
	}
}

// Strangers that connect and never answer, from several addresses and as
// fast as they are closed, do not keep a slave out: each address holds at
// most MaxPendingAuthPerAddr of the pending slots, its own newcomers
// replace its oldest, and every one of the slave's attempts is admitted.
func TestGateOutlastsStrangers(t *testing.T) {
	secret := []byte("s3cret")
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	quit := make(chan struct{})
	admitted := make(chan net.Conn, 64)
	log := zerolog.Nop()
	g := &Gate{Listener: ln, Secret: secret, Quit: quit, Log: &log, Name: "ha",
		Admit: func(c net.Conn) { admitted <- c },
		Go:    func(fn func()) bool { wg.Add(1); go func() { defer wg.Done(); fn() }(); return true }}
	go g.Run()
	defer func() { close(quit); ln.Close(); wg.Wait() }()

	stop := make(chan struct{})
	var strangers sync.WaitGroup
	const addrs, perAddr = 6, 3 * MaxPendingAuthPerAddr // 6×8 slots: the gate is never full as a whole
	var dials atomic.Int64
	for a := range addrs {
		local := &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(2+a))}
		for range perAddr {
			strangers.Add(1)
			go func() {
				defer strangers.Done()
				d := net.Dialer{LocalAddr: local, Timeout: time.Second}
				for {
					select {
					case <-stop:
						return
					default:
					}
					c, err := d.Dial("tcp", ln.Addr().String())
					if err != nil {
						continue
					}
					dials.Add(1)
					_ = c.SetReadDeadline(time.Now().Add(AuthTimeout + time.Second))
					_, _ = io.Copy(io.Discard, c) // hold it until the gate closes it
					c.Close()
				}
			}()
		}
	}
	defer func() { close(stop); strangers.Wait() }()
	testutil.WaitFor(t, 5*time.Second, func() bool { return dials.Load() > addrs*perAddr*2 })

	for i := range 12 {
		c, err := net.DialTimeout("tcp", ln.Addr().String(), time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := Answer(c, secret); err != nil {
			t.Fatalf("attempt %d of the slave: %v (strangers dialled %d times)", i, err, dials.Load())
		}
		select {
		case a := <-admitted:
			a.Close()
		case <-time.After(AuthTimeout):
			t.Fatalf("attempt %d of the slave authenticated but was not admitted", i)
		}
		c.Close()
	}
	t.Logf("12 of 12 slave attempts admitted while strangers dialled %d times", dials.Load())
}

// A full gate makes room by closing the oldest pending connection; an
// address at its share replaces its own oldest instead.
func TestGateMakesRoom(t *testing.T) {
	g := &Gate{}
	conn := func(i int) net.Conn { c, _ := net.Pipe(); return c }
	for i := range MaxPendingAuth {
		g.pending = append(g.pending, pendingConn{c: conn(i), addr: fmt.Sprintf("10.0.0.%d", i%10)})
	}
	oldest := g.pending[0].c
	if v := g.makeRoomLocked("10.0.1.1"); v != oldest || len(g.pending) != MaxPendingAuth-1 {
		t.Fatalf("a full gate evicted %v, want the oldest", v)
	}
	g.pending = g.pending[:0]
	for i := range MaxPendingAuthPerAddr {
		g.pending = append(g.pending, pendingConn{c: conn(i), addr: "10.0.0.9"})
		g.pending = append(g.pending, pendingConn{c: conn(i), addr: fmt.Sprintf("10.0.2.%d", i)})
	}
	ownOldest := g.pending[0].c
	if v := g.makeRoomLocked("10.0.0.9"); v != ownOldest {
		t.Fatal("an address at its share did not replace its own oldest")
	}
	if v := g.makeRoomLocked("10.0.3.1"); v != nil {
		t.Fatal("a gate with room evicted a connection")
	}
}
