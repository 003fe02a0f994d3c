package main

import (
	"os"
	"path/filepath"
	"slices"
	"syscall"
	"testing"
)

// TestFindAndSignal: processes are matched by argv[0]'s base name (not by
// an argument, not this process), each gets SIGTERM; none found exits 1.
func TestFindAndSignal(t *testing.T) {
	proc := t.TempDir()
	for pid, cmdline := range map[string]string{
		"10":   "/home/rocketmq/lib/mqbroker\x00-c\x00../conf/broker.conf\x00",
		"11":   "sh\x00mqbroker\x00-n\x00ns:9876\x00",
		"12":   "./mqbroker\x00",
		"13":   "/usr/bin/mqnamesrv\x00",
		"14":   "", // a kernel thread
		"self": "mqbroker\x00",
		"99":   "mqbroker\x00", // this process
	} {
		if err := os.MkdirAll(filepath.Join(proc, pid), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, pid, "cmdline"), []byte(cmdline), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if got := find(proc, "mqbroker", 99); !slices.Equal(got, []int{10, 12}) {
		t.Fatalf("brokers %v, want [10 12]", got)
	}
	var killed []int
	kill := func(pid int, sig syscall.Signal) error {
		if sig != syscall.SIGTERM {
			t.Errorf("signal %v", sig)
		}
		killed = append(killed, pid)
		return nil
	}
	if code := run([]string{"broker"}, proc, 99, kill); code != 0 || !slices.Equal(killed, []int{10, 12}) {
		t.Fatalf("broker: code %d, killed %v", code, killed)
	}
	if code := run([]string{"proxy"}, proc, 99, kill); code != 1 {
		t.Fatalf("no proxy: code %d", code)
	}
	if code := run([]string{"bogus"}, proc, 99, kill); code != 0 {
		t.Fatalf("usage: code %d", code)
	}
}

// TestPick: --pid and --port narrow the signal to one broker; a port is
// matched through the listening socket's inode in net/tcp(6) and the
// process's fd links.
func TestPick(t *testing.T) {
	proc := t.TempDir()
	write := func(name, data string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Dir(filepath.Join(proc, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(proc, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	link := func(pid, fd, target string) {
		t.Helper()
		if err := os.MkdirAll(filepath.Join(proc, pid, "fd"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(target, filepath.Join(proc, pid, "fd", fd)); err != nil {
			t.Fatal(err)
		}
	}
	write("20/cmdline", "mqbroker\x00")
	write("21/cmdline", "mqbroker\x00")
	link("20", "3", "socket:[111]")
	link("21", "3", "/dev/null")
	link("21", "7", "socket:[222]")
	head := "  sl  local_address rem_address   st tx_queue rx_queue tr tm->when retrnsmt   uid  timeout inode\n"
	write("net/tcp", head+
		"   0: 0100007F:2A9F 00000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 111 1 0 100 0 0 10 0\n"+
		"   1: 0100007F:2AA9 0100007F:9C40 01 00000000:00000000 00:00000000 00000000  1000        0 333 1 0 100 0 0 10 0\n")
	write("net/tcp6", head+
		"   0: 00000000000000000000000000000000:2AA9 00000000000000000000000000000000:0000 0A 00000000:00000000 00:00000000 00000000  1000        0 222 1 0 100 0 0 10 0\n")
	var killed []int
	kill := func(pid int, _ syscall.Signal) error { killed = append(killed, pid); return nil }
	for _, c := range []struct {
		args []string
		code int
		want []int
	}{
		{[]string{"broker", "--port", "10911"}, 0, []int{20}}, // 0x2A9F
		{[]string{"broker", "--port=10921"}, 0, []int{21}},    // 0x2AA9 on tcp6; the tcp line is not LISTEN
		{[]string{"broker", "--pid", "21"}, 0, []int{21}},
		{[]string{"broker", "--pid", "22"}, 1, nil},
		{[]string{"broker", "--port", "9876"}, 1, nil},
		{[]string{"broker", "--port", "70000"}, 2, nil},
		{[]string{"broker", "--pid", "1", "--port", "2"}, 2, nil},
		{[]string{"broker", "--name", "x"}, 2, nil},
		{[]string{"broker", "--pid"}, 2, nil},
		{[]string{"broker"}, 0, []int{20, 21}},
	} {
		killed = nil
		if code := run(c.args, proc, 99, kill); code != c.code || !slices.Equal(killed, c.want) {
			t.Errorf("%v: code %d killed %v, want %d %v", c.args, code, killed, c.code, c.want)
		}
	}
}
