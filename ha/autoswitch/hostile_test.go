package autoswitch

import (
	"bytes"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/store"
)

// expectClosed reads until the peer closes c (frames it sends meanwhile
// are skipped); a deadline first fails.
func expectClosed(t *testing.T, c net.Conn, within time.Duration) {
	t.Helper()
	if err := c.SetReadDeadline(time.Now().Add(within)); err != nil {
		t.Fatal(err)
	}
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v", within)
	}
}

func dial(t *testing.T, addr string) net.Conn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func write(t *testing.T, c net.Conn, b []byte) {
	t.Helper()
	if _, err := c.Write(b); err != nil {
		t.Fatal(err)
	}
}

// A master closes a slave's connection on frames no slave sends: a report
// before the handshake, a first report beyond its end, a report going back
// or beyond what was sent, a second handshake, an unknown state, a slave
// id that is negative or the master's own; and
// refuses connections while it is not master. A well-behaved slave is
// served throughout.
func TestMasterRefusesBogusSlaves(t *testing.T) {
	cfg := testConfig()
	cfg.HAHousekeepingInterval = 5 * time.Second
	m := openNode(t, cfg)
	c := dial(t, m.svc.Addr())
	expectClosed(t, c, 5*time.Second) // no role yet
	m.master(t, 1, 1, []int64{1}, 1)
	put(t, m.st, 0, 100, 2)
	sl := openNode(t, testConfig())
	if err := sl.svc.BecomeSlave(m.svc.Addr(), 1, 2); err != nil {
		t.Fatal(err)
	}
	end := m.st.MaxPhyOffset()
	hs := AppendSlaveHandshake(nil, false, false, 7)
	for name, frames := range map[string][][]byte{
		"report before handshake": {AppendSlaveReport(nil, 0)},
		"beyond the end":          {hs, AppendSlaveReport(nil, end+1)},
		"went back":               {hs, AppendSlaveReport(nil, end), AppendSlaveReport(nil, end-1)},
		"beyond what was sent":    {hs, AppendSlaveReport(nil, 0), AppendSlaveReport(nil, end+100)},
		"second handshake":        {hs, AppendSlaveReport(nil, end), hs},
		"state 7":                 {{0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0, 0}},
		"negative report":         {hs, bytes.Repeat([]byte{0xff}, 12)},
		"negative slave id":       {AppendSlaveHandshake(nil, false, false, -1)},
		"the master's own id":     {AppendSlaveHandshake(nil, false, false, 1), AppendSlaveReport(nil, end)},
	} {
		c := dial(t, m.svc.Addr())
		for _, f := range frames {
			write(t, c, f)
		}
		t.Run(name, func(t *testing.T) { expectClosed(t, c, 5*time.Second) })
	}
	put(t, m.st, 100, 50, 2)
	sameLogs(t, m, sl, 2)
}

// fakeMaster accepts one slave connection at a time and runs fn on it.
func fakeMaster(t *testing.T, fn func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			fn(c)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String()
}

// A slave sends Apache's handshake, and drops a master that answers it
// with a transfer frame, announces a body larger than its read buffer, or
// sends bytes that do not continue its commit log; nothing is appended.
func TestSlaveRefusesBogusMaster(t *testing.T) {
	sl := openNode(t, testConfig())
	put(t, sl.st, 0, 10, 1) // a new replica's own bytes: kept (no epochs)
	before := sl.st.MaxPhyOffset()
	sl.svc.retryRefused = 100 * time.Millisecond
	answers := [][]byte{
		AppendMasterTransferHeader(nil, 0, before, 1, 0, 0),                                                      // no handshake
		AppendMasterTransferHeader(AppendMasterHandshake(nil, 0, 0, nil), slaveReadBuffer, before, 1, 0, 0),      // huge
		append(AppendMasterTransferHeader(AppendMasterHandshake(nil, 0, 0, nil), 3, before+5, 1, 0, 0), 1, 2, 3), // a gap
	}
	got := make(chan []byte, len(answers))
	closed := make(chan bool, len(answers))
	i := 0
	addr := fakeMaster(t, func(c net.Conn) {
		if i >= len(answers) {
			return
		}
		hs := make([]byte, SlaveHandshakeSize)
		if _, err := io.ReadFull(c, hs); err != nil {
			return
		}
		got <- hs
		_, _ = c.Write(answers[i])
		i++
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, err := io.Copy(io.Discard, c) // reports, until the slave closes
		var ne net.Error
		closed <- !(errors.As(err, &ne) && ne.Timeout())
	})
	if err := sl.svc.BecomeSlave(addr, 1, 5); err != nil {
		t.Fatal(err)
	}
	for range answers {
		select {
		case hs := <-got:
			if want := AppendSlaveHandshake(nil, false, false, 5); !bytes.Equal(hs, want) {
				t.Fatalf("handshake %x, want %x", hs, want)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("slave never connected")
		}
		select {
		case ok := <-closed:
			if !ok {
				t.Fatal("slave kept a bogus master's connection")
			}
		case <-time.After(30 * time.Second):
			t.Fatal("no close")
		}
	}
	if sl.st.MaxPhyOffset() != before {
		t.Fatalf("commit log end %d, want %d", sl.st.MaxPhyOffset(), before)
	}
	testutil.WaitFor(t, 5*time.Second, func() bool { return !sl.svc.Status().Connected })
}

// An Apache master with an empty commit log beats at offset -1 until it
// has data; the slave keeps the link, records the master's epoch and then
// takes the first bytes at 0.
func TestSlaveFollowsEmptyApacheMaster(t *testing.T) {
	src := openNode(t, testConfig())
	put(t, src.st, 0, 5, 1)
	sp, ok := src.st.ReadReplica(0, 1<<20)
	if !ok {
		t.Fatal("no bytes")
	}
	data := append([]byte(nil), sp.Bytes...)
	sp.Release()
	addr := fakeMaster(t, func(c net.Conn) { // registered first: stopped after the slave

		hs := make([]byte, SlaveHandshakeSize)
		if _, err := io.ReadFull(c, hs); err != nil {
			return
		}
		b := AppendMasterHandshake(nil, 0, 1, []store.EpochEntry{{Epoch: 1, StartOffset: 0}})
		for range 3 {
			b = AppendMasterTransferHeader(b, 0, -1, 1, 0, 0)
		}
		b = append(AppendMasterTransferHeader(b, len(data), 0, 1, 0, int64(len(data))), data...)
		_, _ = c.Write(b)
		_ = c.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, _ = io.Copy(io.Discard, c)
	})
	sl := openNode(t, testConfig())
	if err := sl.svc.BecomeSlave(addr, 1, 2); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return sl.st.MaxPhyOffset() == int64(len(data)) })
	if e := sl.epochs.All(); len(e) != 1 || e[0].Epoch != 1 || e[0].StartOffset != 0 {
		t.Fatalf("epochs %v", e)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return sl.st.MaxOffset("TopicAS", 0) == 5 })
}

// A stranger's silent connections cannot keep a slave out: with maxSlaves
// of them open, a slave connecting evicts the oldest and replicates.
func TestMasterEvictsSilentConnections(t *testing.T) {
	cfg := testConfig()
	cfg.HAHousekeepingInterval = 20 * time.Second
	m := openNode(t, cfg)
	m.master(t, 1, 1, []int64{1}, 1)
	put(t, m.st, 0, 100, 2)
	silent := make([]net.Conn, maxSlaves)
	for i := range silent {
		silent[i] = dial(t, m.svc.Addr())
	}
	testutil.WaitFor(t, 10*time.Second, func() bool {
		m.svc.mu.Lock()
		defer m.svc.mu.Unlock()
		return m.svc.term != nil && len(m.svc.term.conns) == maxSlaves
	})
	sl := openNode(t, testConfig())
	if err := sl.svc.BecomeSlave(m.svc.Addr(), 1, 2); err != nil {
		t.Fatal(err)
	}
	expectClosed(t, silent[0], 5*time.Second)
	sameLogs(t, m, sl, 2)
}
