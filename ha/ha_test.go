package ha

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"net/netip"
	"runtime"
	"testing"
	"testing/iotest"
	"time"

	"github.com/rocketgo/rocketgo/internal/testutil"
	"github.com/rocketgo/rocketgo/store"
)

func TestMain(m *testing.M) {
	store.FakeDiskUsage(0.5) // no test depends on how full the host disk is
	testutil.VerifyNoLeaks(m)
}

const fileSize = 64 << 10

func storeConfig(dir string, replica bool) store.Config {
	cfg := store.DefaultConfig()
	cfg.StorePathRootDir = dir
	cfg.MappedFileSizeCommitLog = fileSize
	cfg.MappedFileSizeConsumeQueue = 100 * 20
	cfg.FlushIntervalCommitLog = 10
	cfg.FlushIntervalConsumeQueue = 10
	cfg.Replica = replica
	return cfg
}

func openStore(t testing.TB, cfg store.Config) *store.Store {
	t.Helper()
	st, err := store.Open(cfg, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := st.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := st.Shutdown(context.Background()); err != nil {
			t.Error(err)
		}
	})
	return st
}

// testConfig shortens Apache's intervals for tests.
func testConfig(role Role) Config {
	cfg := DefaultConfig()
	cfg.BrokerRole = role
	cfg.HASendHeartbeatInterval = 100
	cfg.HAHousekeepingInterval = 1000
	cfg.SlaveTimeout = 1000
	return cfg
}

func startService(t testing.TB, cfg Config, st *store.Store) *Service {
	t.Helper()
	s, err := New(cfg, "127.0.0.1:0", st, testutil.Logger())
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stopService(t, s) })
	return s
}

func stopService(t testing.TB, s *Service) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := s.Shutdown(ctx); err != nil {
		t.Error(err)
	}
}

var host = netip.MustParseAddrPort("127.0.0.1:10911")

func put(t testing.TB, st *store.Store, from, n int, queues int32) store.PutResult {
	t.Helper()
	var r store.PutResult
	for i := from; i < from+n; i++ {
		var err error
		r, err = st.Put(&store.PutMessage{
			Topic: "TopicHA", QueueID: int32(i) % queues, Body: fmt.Appendf(nil, "body-%d-%s", i, bytes.Repeat([]byte("x"), i%300)),
			Properties: "TAGS\x01t\x02KEYS\x01k" + fmt.Sprint(i) + "\x02", BornTimestamp: int64(i), BornHost: host, StoreHost: host,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return r
}

// sameLogs compares the slave's commit log with the master's over the
// slave's whole range, and the consume queues' max offsets.
func sameLogs(t testing.TB, m, sl *store.Store, queues int32) {
	t.Helper()
	testutil.WaitFor(t, 20*time.Second, func() bool { return sl.MaxPhyOffset() == m.MaxPhyOffset() })
	for off := sl.MinPhyOffset(); off < m.MaxPhyOffset(); {
		a, ok1 := m.ReadReplica(off, 1<<20)
		b, ok2 := sl.ReadReplica(off, 1<<20)
		if !ok1 || !ok2 {
			t.Fatalf("read at %d: master %v slave %v", off, ok1, ok2)
		}
		n := min(len(a.Bytes), len(b.Bytes))
		if !bytes.Equal(a.Bytes[:n], b.Bytes[:n]) {
			t.Fatalf("commit logs differ in [%d, %d)", off, off+int64(n))
		}
		off += int64(n)
		a.Release()
		b.Release()
	}
	testutil.WaitFor(t, 20*time.Second, func() bool {
		return sl.DispatchedPhyOffset() >= sl.MaxPhyOffset() && m.DispatchedPhyOffset() >= m.MaxPhyOffset()
	})
	for q := range queues {
		if a, b := m.MaxOffset("TopicHA", q), sl.MaxOffset("TopicHA", q); a != b {
			t.Fatalf("queue %d: max offset master %d slave %d", q, a, b)
		}
	}
}

func TestReplicateMasterToSlave(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	put(t, m, 0, 1500, 4) // several files before the slave exists
	lastFile := m.MaxPhyOffset() - m.MaxPhyOffset()%fileSize
	if lastFile == 0 {
		t.Fatal("want a master with several files")
	}
	ms := startService(t, testConfig(AsyncMaster), m)

	slCfg := storeConfig(t.TempDir(), true)
	sl := openStore(t, slCfg)
	cfg := testConfig(Slave)
	cfg.HAMasterAddress = ms.Addr()
	ss := startService(t, cfg, sl)
	sameLogs(t, m, sl, 4)
	if sl.MinPhyOffset() != lastFile {
		t.Fatalf("empty slave starts at %d, want the master's last file %d", sl.MinPhyOffset(), lastFile)
	}
	// Live traffic across file boundaries.
	put(t, m, 1500, 1500, 4)
	sameLogs(t, m, sl, 4)
	testutil.WaitFor(t, 10*time.Second, func() bool { // the slave's report after its last frame
		st := ms.Status()
		return len(st.Slaves) == 1 && st.Slaves[0].AckOffset == m.MaxPhyOffset()
	})
	if s := ss.Status(); !s.Connected || s.MasterHAAddr != ms.Addr() || s.SlaveMaxOffset != m.MaxPhyOffset() {
		t.Fatalf("slave status %+v", s)
	}

	// The slave goes away; the master writes on; a new service resumes
	// from the slave's end.
	stopService(t, ss)
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(ms.Status().Slaves) == 0 })
	put(t, m, 3000, 800, 4)
	ss = startService(t, cfg, sl)
	sameLogs(t, m, sl, 4)
	if !ss.Status().Connected {
		t.Fatal("resumed slave not connected")
	}
	if sl.MinPhyOffset() != lastFile {
		t.Fatalf("resumed slave starts at %d, want %d", sl.MinPhyOffset(), lastFile)
	}
}

// A slave learns its master from UpdateMasterAddress and follows a change.
func TestSlaveFollowsMasterAddress(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	put(t, m, 0, 100, 2)
	ms := startService(t, testConfig(AsyncMaster), m)
	sl := openStore(t, storeConfig(t.TempDir(), true))
	ss := startService(t, testConfig(Slave), sl)
	if ss.Status().Connected {
		t.Fatal("connected without an address")
	}
	ss.UpdateMasterAddress(ms.Addr())
	sameLogs(t, m, sl, 2)
	ss.UpdateMasterAddress("")
	testutil.WaitFor(t, 10*time.Second, func() bool { return !ss.Status().Connected && len(ms.Status().Slaves) == 0 })
	put(t, m, 100, 100, 2)
	ss.UpdateMasterAddress(ms.Addr())
	sameLogs(t, m, sl, 2)
}

func TestSyncMaster(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	mcfg := testConfig(SyncMaster)
	mcfg.SlaveTimeout = 300
	ms := startService(t, mcfg, m)
	wait := func(end int64) chan error {
		ch := make(chan error, 1)
		m.Wait(end, store.Replicated, func(err error) { ch <- err })
		return ch
	}
	r := put(t, m, 0, 1, 1)
	end := r.PhysicalOffset + int64(r.WroteBytes)
	select { // no slave: refused at once
	case err := <-wait(end):
		if !errors.Is(err, store.ErrReplicaNotAvailable) {
			t.Fatalf("no slave: %v", err)
		}
	default:
		t.Fatal("no slave: not answered at once")
	}

	// A fake slave that reports once and never acks: the wait times out.
	c, err := net.Dial("tcp", ms.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(appendReport(nil, end)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return ms.usable.Load() == 1 })
	r = put(t, m, 1, 1, 1)
	end2 := r.PhysicalOffset + int64(r.WroteBytes)
	t0 := time.Now()
	if err := <-wait(end2); !errors.Is(err, store.ErrReplicaTimeout) {
		t.Fatalf("silent slave: %v", err)
	}
	if d := time.Since(t0); d < 300*time.Millisecond {
		t.Fatalf("timed out after %v, slaveTimeout 300ms", d)
	}
	// Its ack answers the next one.
	ch := wait(end2)
	if _, err := c.Write(appendReport(nil, end2)); err != nil {
		t.Fatal(err)
	}
	if err := <-ch; err != nil {
		t.Fatalf("acked: %v", err)
	}
	c.Close()
	testutil.WaitFor(t, 10*time.Second, func() bool { return ms.usable.Load() == 0 })

	// A real slave: every wait is answered once it holds the record.
	sl := openStore(t, storeConfig(t.TempDir(), true))
	scfg := testConfig(Slave)
	scfg.HAMasterAddress = ms.Addr()
	startService(t, scfg, sl)
	testutil.WaitFor(t, 10*time.Second, func() bool { return ms.usable.Load() == 1 })
	for i := range 50 {
		r := put(t, m, 2+i, 1, 1)
		if err := <-wait(r.PhysicalOffset + int64(r.WroteBytes)); err != nil {
			t.Fatalf("send %d with a slave: %v", i, err)
		}
		if sl.MaxPhyOffset() < r.PhysicalOffset+int64(r.WroteBytes) {
			t.Fatal("answered before the slave held the record")
		}
	}
}

func TestFallbehindMaxKeys(t *testing.T) {
	for _, tc := range []struct {
		fallbehind, gap, want int64
	}{
		{256 << 20, 256 << 20, 256 << 20},
		{1000, 256 << 20, 1000}, // 4.9's key
		{256 << 20, 2000, 2000}, // 5.x's key alone
		{1000, 2000, 1000},      // both: 4.9's, whose semantics SYNC_MASTER has
	} {
		c := DefaultConfig()
		c.HASlaveFallbehindMax, c.HAMaxGapNotInSync = tc.fallbehind, tc.gap
		if got := c.FallbehindMax(); got != tc.want {
			t.Errorf("haSlaveFallbehindMax %d, haMaxGapNotInSync %d: %d, want %d", tc.fallbehind, tc.gap, got, tc.want)
		}
	}
}

func TestSyncMasterFallbehind(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	mcfg := testConfig(SyncMaster)
	mcfg.HAMaxGapNotInSync = 1000 // as a 5.x broker.conf says it
	ms := startService(t, mcfg, m)
	c, err := net.Dial("tcp", ms.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if _, err := c.Write(appendReport(nil, 0)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return ms.usable.Load() == 1 })
	r := put(t, m, 0, 20, 1) // > 1000 bytes beyond the slave's ack
	ch := make(chan error, 1)
	m.Wait(r.PhysicalOffset+int64(r.WroteBytes), store.Replicated, func(err error) { ch <- err })
	select {
	case err := <-ch:
		if !errors.Is(err, store.ErrReplicaNotAvailable) {
			t.Fatalf("slave far behind: %v", err)
		}
	default:
		t.Fatal("slave far behind: not answered at once")
	}
}

// expectClosed reads from c until the peer closes it (or deadline).
func expectClosed(t *testing.T, c net.Conn, within time.Duration) {
	t.Helper()
	_ = c.SetReadDeadline(time.Now().Add(within))
	_, err := io.Copy(io.Discard, c)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connection still open after %v", within)
	}
}

func TestMasterRefusesBogusReports(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	put(t, m, 0, 10, 1)
	ms := startService(t, testConfig(AsyncMaster), m)
	for _, tc := range []struct {
		name    string
		reports []int64
	}{
		{"beyond the log", []int64{m.MaxPhyOffset() + 1}},
		{"negative", []int64{-5}},
		{"beyond what was sent", []int64{0, 1 << 40}},
		{"going back", []int64{m.MaxPhyOffset(), 10}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c, err := net.Dial("tcp", ms.Addr())
			if err != nil {
				t.Fatal(err)
			}
			defer c.Close()
			for i, r := range tc.reports {
				if _, err := c.Write(appendReport(nil, r)); err != nil {
					t.Fatal(err)
				}
				if i == len(tc.reports)-1 {
					break
				}
				// Taken before the next one is sent: of reports that
				// arrive in one read, only the last counts.
				testutil.WaitFor(t, 5*time.Second, func() bool {
					for _, sl := range ms.Status().Slaves {
						if sl.AckOffset == r {
							return true
						}
					}
					return false
				})
			}
			expectClosed(t, c, 5*time.Second)
		})
	}
	// The count drops just after the socket closes.
	testutil.WaitFor(t, 5*time.Second, func() bool { return ms.usable.Load() == 0 })
}

// The master sends nothing before the first report, then a frame at the
// reported offset, then heartbeats.
func TestMasterWaitsForFirstReport(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	r := put(t, m, 0, 10, 1)
	ms := startService(t, testConfig(AsyncMaster), m)
	c, err := net.Dial("tcp", ms.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(300 * time.Millisecond)) // > 2 heartbeat intervals
	if n, err := c.Read(make([]byte, 1)); n != 0 || err == nil {
		t.Fatalf("master sent %d bytes before the first report (%v)", n, err)
	}
	if _, err := c.Write(appendReport(nil, r.PhysicalOffset)); err != nil {
		t.Fatal(err)
	}
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	var hdr [headerSize]byte
	off, body, err := readFrame(c, &hdr, make([]byte, 64<<10))
	if err != nil || off != r.PhysicalOffset || len(body) != int(r.WroteBytes) {
		t.Fatalf("first frame at %d, %d bytes (%v); want %d, %d", off, len(body), err, r.PhysicalOffset, r.WroteBytes)
	}
	rec, _ := m.MessageAt(r.PhysicalOffset)
	if !bytes.Equal(rec, body) {
		t.Fatal("frame body differs from the record")
	}
	if _, err := c.Write(appendReport(nil, off+int64(len(body)))); err != nil {
		t.Fatal(err)
	}
	off, body, err = readFrame(c, &hdr, make([]byte, 64<<10))
	if err != nil || off != m.MaxPhyOffset() || len(body) != 0 {
		t.Fatalf("heartbeat at %d, %d bytes (%v)", off, len(body), err)
	}
}

// A slave that stops reading is closed after haHousekeepingInterval, and
// the master holds no more than the socket buffers for it.
func TestMasterClosesSlaveThatStopsReading(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	ms := startService(t, testConfig(AsyncMaster), m)
	c, err := net.DialTCP("tcp", nil, net.TCPAddrFromAddrPort(netip.MustParseAddrPort(ms.Addr())))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_ = c.SetReadBuffer(4096)
	if _, err := c.Write(appendReport(nil, 0)); err != nil {
		t.Fatal(err)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(ms.Status().Slaves) == 1 })
	// Keep reporting (the reader must not time out first), never read.
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(50 * time.Millisecond):
				_, _ = c.Write(appendReport(nil, 0))
			}
		}
	}()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	big := bytes.Repeat([]byte("b"), 16<<10)
	for i := range 2000 { // 32 MiB: far more than the socket buffers hold
		if _, err := m.Put(&store.PutMessage{Topic: "TopicHA", Body: big, BornHost: host, StoreHost: host, BornTimestamp: int64(i)}); err != nil {
			t.Fatal(err)
		}
	}
	t0 := time.Now()
	testutil.WaitFor(t, 20*time.Second, func() bool { return len(ms.Status().Slaves) == 0 })
	if d := time.Since(t0); d > 10*time.Second {
		t.Fatalf("closed after %v, housekeeping 1s", d)
	}
	// Frames are views of the mapped log: nothing of the 32 MiB the slave
	// did not take piled up on the heap.
	runtime.GC()
	var after runtime.MemStats
	runtime.ReadMemStats(&after)
	if grew := int64(after.HeapAlloc) - int64(before.HeapAlloc); grew > 8<<20 {
		t.Fatalf("heap grew by %d bytes for a slave that stopped reading", grew)
	}
}

// A silent slave is closed after haHousekeepingInterval.
func TestMasterClosesSilentSlave(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	ms := startService(t, testConfig(AsyncMaster), m)
	c, err := net.Dial("tcp", ms.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	expectClosed(t, c, 10*time.Second)
}

// fakeMaster accepts one slave and runs fn on the connection.
func fakeMaster(t *testing.T, fn func(c net.Conn)) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		fn(c)
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	return ln.Addr().String()
}

func readReport(t *testing.T, c net.Conn) int64 {
	var b [8]byte
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.ReadFull(c, b[:]); err != nil {
		t.Errorf("read report: %v", err)
		return -1
	}
	return int64(binary.BigEndian.Uint64(b[:]))
}

func TestSlaveRefusesHugeFrame(t *testing.T) {
	sl := openStore(t, storeConfig(t.TempDir(), true))
	closed := make(chan error, 1)
	addr := fakeMaster(t, func(c net.Conn) {
		if off := readReport(t, c); off != 0 {
			t.Errorf("empty slave reported %d", off)
		}
		var h [headerSize]byte
		putHeader(&h, 0, 0x7fffffff)
		_, _ = c.Write(h[:])
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, err := io.Copy(io.Discard, c) // the slave's reports, until it closes
		closed <- err
	})
	cfg := testConfig(Slave)
	cfg.HAMasterAddress = addr
	startService(t, cfg, sl)
	if err := <-closed; err != nil {
		t.Fatalf("slave kept the connection after a 2 GiB header: %v", err)
	}
	if sl.MaxPhyOffset() != 0 {
		t.Fatal("slave appended from a refused frame")
	}
}

// A master dying mid-frame leaves nothing of the frame on the slave; a
// frame at the wrong offset is refused.
func TestSlaveMidFrameAndMismatch(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	r := put(t, m, 0, 20, 1)
	sl := openStore(t, storeConfig(t.TempDir(), true))
	sp, _ := m.ReadReplica(0, 1<<20)
	body := bytes.Clone(sp.Bytes)
	sp.Release()
	if int64(len(body)) != r.PhysicalOffset+int64(r.WroteBytes) {
		t.Fatal("want the whole log in one span")
	}
	step := make(chan struct{})
	addr := fakeMaster(t, func(c net.Conn) {
		readReport(t, c)
		var h [headerSize]byte
		putHeader(&h, 0, 500)
		_, _ = c.Write(h[:])
		_, _ = c.Write(body[:300]) // and die
		close(step)
	})
	cfg := testConfig(Slave)
	cfg.HAMasterAddress = addr
	ss := startService(t, cfg, sl)
	<-step
	testutil.WaitFor(t, 10*time.Second, func() bool { return !ss.Status().Connected })
	if sl.MaxPhyOffset() != 0 {
		t.Fatalf("slave holds %d bytes of a frame that never completed", sl.MaxPhyOffset())
	}

	// A frame the local end does not match: refused, nothing appended.
	if err := sl.AppendReplica(0, body[:1000]); err != nil {
		t.Fatal(err)
	}
	mismatch := make(chan int64, 1)
	addr2 := fakeMaster(t, func(c net.Conn) {
		mismatch <- readReport(t, c)
		var h [headerSize]byte
		putHeader(&h, 2000, 10)
		_, _ = c.Write(h[:])
		_, _ = c.Write(body[2000:2010])
		_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
		_, _ = io.Copy(io.Discard, c)
	})
	ss.UpdateMasterAddress(addr2) // ignored: fixed haMasterAddress
	cfg.HAMasterAddress = addr2
	stopService(t, ss)
	startService(t, cfg, sl)
	if got := <-mismatch; got != 1000 {
		t.Fatalf("slave reported %d, want its end 1000", got)
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return sl.MaxPhyOffset() == 1000 })
}

func TestFrameGolden(t *testing.T) {
	var h [headerSize]byte
	putHeader(&h, 0x0102030405060708, 0x8000)
	if want := []byte{1, 2, 3, 4, 5, 6, 7, 8, 0, 0, 0x80, 0}; !bytes.Equal(h[:], want) {
		t.Fatalf("header % x, want % x", h, want)
	}
	if got, want := appendReport(nil, 1<<30), []byte{0, 0, 0, 0, 0x40, 0, 0, 0}; !bytes.Equal(got, want) {
		t.Fatalf("report % x, want % x", got, want)
	}
	b := append(appendReport(nil, 7), appendReport(nil, 9)...)
	b = append(b, 1, 2, 3) // a partial third
	if off, used, ok := lastReport(b); !ok || off != 9 || used != 16 {
		t.Fatalf("lastReport = %d, %d, %v", off, used, ok)
	}
	if _, _, ok := lastReport(b[:7]); ok {
		t.Fatal("report from 7 bytes")
	}
	frame := append(h[:0:0], 0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 3, 'a', 'b', 'c')
	off, body, err := readFrame(bytes.NewReader(frame), &h, make([]byte, 16))
	if err != nil || off != 0x1000 || string(body) != "abc" {
		t.Fatalf("readFrame = %d %q %v", off, body, err)
	}
	if _, _, err := readFrame(bytes.NewReader(frame), &h, make([]byte, 2)); !errors.As(err, new(*errFrame)) {
		t.Fatalf("body beyond the buffer: %v", err)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0x10, 0, 0, 0, 0, 3, 'a', 'b', 'c'})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff})
	f.Add([]byte{0x80, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 1, 'z'})
	f.Fuzz(func(t *testing.T, in []byte) {
		// Whole, and a byte per read (frames split at every offset): the
		// same frames either way.
		whole := readFrames(t, bytes.NewReader(in), in)
		split := readFrames(t, iotest.OneByteReader(bytes.NewReader(in)), in)
		if whole != split {
			t.Fatalf("%d frames whole, %d a byte at a time", whole, split)
		}
	})
}

func readFrames(t *testing.T, r io.Reader, in []byte) int {
	var h [headerSize]byte
	buf := make([]byte, 64)
	consumed, n := 0, 0
	for {
		off, body, err := readFrame(r, &h, buf)
		if err != nil {
			return n
		}
		if off < 0 || len(body) > len(buf) {
			t.Fatalf("accepted offset %d, body %d", off, len(body))
		}
		consumed += headerSize + len(body)
		if !bytes.Equal(body, in[consumed-len(body):consumed]) {
			t.Fatal("body is not the input's bytes")
		}
		n++
	}
}

// A master keeps at most maxSlaves connections; one more is closed at once.
func TestMasterBoundsSlaves(t *testing.T) {
	m := openStore(t, storeConfig(t.TempDir(), false))
	cfg := testConfig(AsyncMaster)
	cfg.HAHousekeepingInterval = 20000
	ms := startService(t, cfg, m)
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ms.Addr())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { c.Close() })
		return c
	}
	// maxSlaves silent connections (a stranger's): each new one evicts
	// the oldest, so the count stays at the bound and a slave gets in.
	silent := make([]net.Conn, maxSlaves)
	for i := range silent {
		silent[i] = dial()
	}
	testutil.WaitFor(t, 10*time.Second, func() bool { return len(ms.Status().Slaves) == maxSlaves })
	slave := dial()
	expectClosed(t, silent[0], 5*time.Second)
	var report [8]byte // offset 0
	if _, err := slave.Write(report[:]); err != nil {
		t.Fatal(err)
	}
	if n := len(ms.Status().Slaves); n != maxSlaves {
		t.Fatalf("%d slaves, want %d", n, maxSlaves)
	}
	// Once every connection has reported, a new one is refused.
	for _, c := range silent[1:] {
		if _, err := c.Write(report[:]); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WaitFor(t, 10*time.Second, func() bool {
		n := 0
		for _, sl := range ms.Status().Slaves {
			if sl.AckOffset >= 0 {
				n++
			}
		}
		return n == maxSlaves
	})
	expectClosed(t, dial(), 5*time.Second)
	if n := len(ms.Status().Slaves); n != maxSlaves {
		t.Fatalf("%d slaves, want %d", n, maxSlaves)
	}
}
