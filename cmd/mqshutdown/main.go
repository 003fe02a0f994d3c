// Command mqshutdown stops rocketgo's servers on this host the way Apache's
// mqshutdown script stops its JVMs: it finds every process of the kind by
// its program name and sends it SIGTERM, on which each one shuts down
// gracefully (see docs/operations.md, "Graceful shutdown").
//
//	mqshutdown broker | namesrv | proxy | controller [--pid PID | --port PORT]
//
// With --pid or --port it stops only the process of that kind with that
// PID, or the one listening on that TCP port (its client port, or any
// other it listens on), so one of several brokers on a host can be picked.
//
// It prints Apache's lines ("The mqbroker(PID) is running...", "Send
// shutdown request to mqbroker(PID) OK", "No mqbroker running.") and exits
// 1 when none runs, as the script does. Processes are found in /proc by the
// base name of their argv[0] (mqbroker, mqnamesrv, mqproxy, mqcontroller),
// so the image's sh wrappers, which exec the binaries, are found too.
package main

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], "/proc", os.Getpid(), syscall.Kill))
}

// programs maps mqshutdown's argument to the program it stops.
var programs = map[string]string{
	"broker":     "mqbroker",
	"namesrv":    "mqnamesrv",
	"proxy":      "mqproxy",
	"controller": "mqcontroller",
}

func run(args []string, proc string, self int, kill func(int, syscall.Signal) error) int {
	if len(args) == 0 || programs[args[0]] == "" {
		fmt.Println(usage)
		return 0 // as Apache's script, which falls out of its case
	}
	name := programs[args[0]]
	pick, err := parsePick(args[1:])
	if err != nil {
		fmt.Fprintf(os.Stderr, "mqshutdown: %v\n%s\n", err, usage)
		return 2
	}
	pids := find(proc, name, self)
	if pick.pid != 0 || pick.port != 0 {
		pids = pick.filter(proc, pids)
		if len(pids) == 0 {
			fmt.Printf("No %s running %s.\n", name, pick)
			return 1
		}
	}
	if len(pids) == 0 {
		fmt.Printf("No %s running.\n", name)
		return 1
	}
	list := strings.Trim(fmt.Sprint(pids), "[]")
	fmt.Printf("The %s(%s) is running...\n", name, list)
	code := 0
	for _, pid := range pids {
		if err := kill(pid, syscall.SIGTERM); err != nil {
			fmt.Fprintf(os.Stderr, "mqshutdown: kill %d: %v\n", pid, err)
			code = 1
		}
	}
	if code == 0 {
		fmt.Printf("Send shutdown request to %s(%s) OK\n", name, list)
	}
	return code
}

const usage = "Usage: mqshutdown broker | namesrv | controller | proxy [--pid PID | --port PORT]"

// pick narrows mqshutdown to one process: by PID or by a TCP port it
// listens on.
type pick struct{ pid, port int }

func (p pick) String() string {
	if p.pid != 0 {
		return "with PID " + strconv.Itoa(p.pid)
	}
	return "on port " + strconv.Itoa(p.port)
}

func parsePick(args []string) (pick, error) {
	var p pick
	for len(args) > 0 {
		flag, value, inline := strings.Cut(args[0], "=")
		args = args[1:]
		if !inline {
			if len(args) == 0 {
				return p, fmt.Errorf("%s needs a value", flag)
			}
			value, args = args[0], args[1:]
		}
		n, err := strconv.Atoi(value)
		switch {
		case flag != "--pid" && flag != "-pid" && flag != "--port" && flag != "-port":
			return p, fmt.Errorf("unknown option %q", flag)
		case err != nil || n <= 0 || strings.HasSuffix(flag, "port") && n > 65535:
			return p, fmt.Errorf("%s %q is not a %s", flag, value, strings.TrimLeft(flag, "-"))
		case strings.HasSuffix(flag, "pid"):
			p.pid = n
		default:
			p.port = n
		}
	}
	if p.pid != 0 && p.port != 0 {
		return p, fmt.Errorf("--pid and --port exclude each other")
	}
	return p, nil
}

// filter keeps the one process of pids that p names.
func (p pick) filter(proc string, pids []int) []int {
	if p.pid != 0 {
		if slices.Contains(pids, p.pid) {
			return []int{p.pid}
		}
		return nil
	}
	inodes := listeningInodes(proc, p.port)
	if len(inodes) == 0 {
		return nil
	}
	for _, pid := range pids {
		if holdsSocket(proc, pid, inodes) {
			return []int{pid}
		}
	}
	return nil
}

// listeningInodes reads the inodes of the TCP sockets listening on port
// from proc's net/tcp and net/tcp6 (as seen from this process's network
// namespace).
func listeningInodes(proc string, port int) map[string]bool {
	inodes := map[string]bool{}
	want := fmt.Sprintf(":%04X", port)
	for _, f := range []string{"net/tcp", "net/tcp6"} {
		b, err := os.ReadFile(filepath.Join(proc, f))
		if err != nil {
			continue
		}
		for _, line := range strings.Split(string(b), "\n")[1:] {
			// sl local_address rem_address st tx:rx tr:when retrnsmt uid timeout inode
			fields := strings.Fields(line)
			if len(fields) < 10 || fields[3] != "0A" || !strings.HasSuffix(fields[1], want) {
				continue
			}
			inodes[fields[9]] = true
		}
	}
	return inodes
}

// holdsSocket reports whether process pid has one of inodes open.
func holdsSocket(proc string, pid int, inodes map[string]bool) bool {
	dir := filepath.Join(proc, strconv.Itoa(pid), "fd")
	fds, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, fd := range fds {
		target, err := os.Readlink(filepath.Join(dir, fd.Name()))
		if inode, ok := strings.CutPrefix(target, "socket:["); err == nil && ok && inodes[strings.TrimSuffix(inode, "]")] {
			return true
		}
	}
	return false
}

// find lists the processes under proc whose argv[0] has base name name,
// this one excepted, in ascending order.
func find(proc, name string, self int) []int {
	entries, err := os.ReadDir(proc)
	if err != nil {
		return nil
	}
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil || pid == self {
			continue
		}
		cmdline, err := os.ReadFile(filepath.Join(proc, e.Name(), "cmdline"))
		if err != nil || len(cmdline) == 0 {
			continue // gone, or a kernel thread
		}
		argv0, _, _ := strings.Cut(string(cmdline), "\x00")
		if filepath.Base(argv0) == name {
			pids = append(pids, pid)
		}
	}
	return pids // ReadDir sorts by name; same-length names sort numerically, others nearly
}
