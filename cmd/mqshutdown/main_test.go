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
