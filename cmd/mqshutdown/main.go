// Command mqshutdown stops rocketgo's servers on this host the way Apache's
// mqshutdown script stops its JVMs: it finds every process of the kind by
// its program name and sends it SIGTERM, on which each one shuts down
// gracefully (see docs/operations.md, "Graceful shutdown").
//
//	mqshutdown broker | namesrv | proxy | controller
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
	if len(args) != 1 || programs[args[0]] == "" {
		fmt.Println("Usage: mqshutdown broker | namesrv | controller | proxy")
		return 0 // as Apache's script, which falls out of its case
	}
	name := programs[args[0]]
	pids := find(proc, name, self)
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
