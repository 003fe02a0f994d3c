package main

import (
	"bytes"
	"net"
	"strings"
	"sync"
	"testing"
	"time"
)

// silentServer accepts connections and never answers: a broker or name
// server that hangs.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never read
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// closedAddr is an address nothing listens on.
func closedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestHostileArgs: every command, given bad arguments or a peer that does
// not answer, ends with exit status 1 and a message on stderr, within the
// per-call timeout, without a panic.
func TestHostileArgs(t *testing.T) {
	old := callTimeout
	callTimeout = 300 * time.Millisecond
	t.Cleanup(func() { callTimeout = old })
	silent, closed := silentServer(t), closedAddr(t)

	cases := []struct {
		args    []string
		wantErr string // on stderr (stdout for an unknown command)
	}{
		{[]string{"noSuchCommand", "-n", closed}, "The sub command noSuchCommand not exist."},
		{[]string{"help", "noSuchCommand"}, "The sub command noSuchCommand not exist."},
		{[]string{"topicRoute", "-n", silent, "-t", "T"}, "deadline"},
		{[]string{"topicRoute", "-n", closed, "-t", "T"}, "refused"},
		{[]string{"topicRoute", "-n", "", "-t", "T"}, "no name server address"},
		{[]string{"topicRoute", "-n", closed, "-t", ""}, "-t topic is required"},
		{[]string{"topicRoute", "-n", closed, "-t", "   "}, "-t topic is required"},
		{[]string{"topicStatus", "-n", closed}, "Missing required option: t"},
		{[]string{"updateTopic", "-n", closed, "-b", silent, "-t", "T", "-r", "99999999999"}, "not a 32-bit integer"},
		{[]string{"updateTopic", "-n", closed, "-b", silent, "-t", "T", "-w", "-1e9"}, "not a 32-bit integer"},
		{[]string{"updateTopic", "-n", closed, "-b", silent, "-t", "T"}, "deadline"},
		{[]string{"updateTopic", "-n", closed, "-b", silent, "-t", ""}, "-t topic is required"},
		{[]string{"updateTopic", "-n", closed, "-b", silent, "-t", "T", "-a", "bad"}, "attribute format is wrong"},
		{[]string{"brokerStatus", "-n", closed, "-b", silent}, "deadline"},
		{[]string{"brokerStatus", "-n", closed}, "Missing required option: [-b Broker address, -c which cluster]"},
		{[]string{"getBrokerConfig", "-n", closed, "-b", silent}, "deadline"},
		{[]string{"clusterList", "-n", silent}, "deadline"},
		{[]string{"clusterList", "-n", closed, "-i", "x"}, "not a 32-bit integer"},
		{[]string{"consumerProgress", "-n", silent, "-g", "G"}, "deadline"},
		{[]string{"consumerConnection", "-n", closed}, "Missing required option: g"},
		{[]string{"producerConnection", "-n", closed, "-g", "G"}, "Missing required option: t"},
		{[]string{"producerConnection", "-n", silent, "-g", "G", "-t", "T"}, "deadline"},
		{[]string{"queryMsgById", "-n", silent, "-t", "T", "-i", "7F0000010000481E000000000000077E"}, "deadline"},
		{[]string{"queryMsgById", "-n", closed, "-t", "T", "-i", " , "}, "-i message id is required"},
		{[]string{"queryMsgByOffset", "-n", closed, "-t", "T", "-b", "b", "-i", "99999999999", "-o", "0"}, "not a 32-bit integer"},
		{[]string{"queryMsgByKey", "-n", closed, "-t", "T"}, "Missing required option: k"},
		{[]string{"resetOffsetByTime", "-n", closed, "-g", "G", "-t", "T", "-s", "yesterday"}, "not now, milliseconds"},
		{[]string{"resetOffsetByTime", "-n", closed, "-g", "G", "-t", "T", "-s", "0", "-b", silent, "-q", "1e3"}, "not a 32-bit integer"},
		{[]string{"resetOffsetByTime", "-n", closed, "-g", "G", "-t", "T", "-s", "0", "-b", silent, "-q", "0", "-o", "x"}, "-o \"x\": not a number"},
		{[]string{"resetOffsetByTime", "-n", closed, "-g", "G", "-t", "T", "-s", "0", "-b", silent, "-q", "0", "-o", "5"}, "deadline"},
		{[]string{"updateBrokerConfig", "-n", closed, "-b", silent, "-k", "a=b", "-v", "1"}, "a key (no '=' or newline)"},
		{[]string{"updateSubGroup", "-n", closed, "-b", silent, "-g", "G"}, "deadline"},
		{[]string{"updateSubGroup", "-n", closed, "-b", silent, "-g", "G", "-q", "many"}, "not a number"},
		{[]string{"updateSubGroup", "-n", closed, "-b", silent, "-g", "G", "-p", "{"}, "retry policy"},
		{[]string{"deleteSubGroup", "-n", closed, "-b", silent, "-g", ""}, "-g consumer group is required"},
		{[]string{"deleteTopic", "-n", closed, "-c", "C", "-t", "T"}, "refused"},
		{[]string{"topicList", "-n", closed, "stray"}, "refused"}, // an argument no option takes is ignored, as by Apache,
		{[]string{"topicList", "-n", closed, "-zz"}, "Unrecognized option: -zz"},
		{[]string{"topicList", "-n"}, "Missing argument for option: n"},
	}
	for _, c := range cases {
		t.Run(strings.Join(c.args, " "), func(t *testing.T) {
			var out, errOut bytes.Buffer
			start := time.Now()
			code := run(c.args, &out, &errOut)
			if took := time.Since(start); took > 5*time.Second {
				t.Errorf("took %v", took)
			}
			if code != 1 {
				t.Errorf("exit %d, want 1\nstdout: %s\nstderr: %s", code, out.String(), errOut.String())
			}
			if !strings.Contains(out.String()+errOut.String(), c.wantErr) {
				t.Errorf("output lacks %q\nstdout: %s\nstderr: %s", c.wantErr, out.String(), errOut.String())
			}
		})
	}
}

// TestEveryCommandHostile runs every command with each set of hostile
// arguments against a peer that never answers: none may panic or hang.
func TestEveryCommandHostile(t *testing.T) {
	old := callTimeout
	callTimeout = 200 * time.Millisecond
	t.Cleanup(func() { callTimeout = old })
	silent := silentServer(t)
	sets := [][]string{
		{},
		{"-n", silent},
		{"-n", silent, "-b", silent, "-c", "C", "-t", "T", "-g", "G", "-k", "K", "-v", "V", "-i", "1", "-o", "0", "-s", "now"},
		{"-n", silent, "-t", "", "-g", "", "-b", "", "-c", ""},
		{"-n", ";;;", "-t", strings.Repeat("x", 70000)},
		{"-n", silent, "-r", "2147483648", "-w", "-1", "-q", "x", "-p", "[]"},
		{"-n", silent, "-a", silent, "-b", "1", "-bn", "B", "-c", "C", "-u", "U", "-p", "P", "-s", "S", "-r", "R", "-d", "Allow", "-m", "get"},
		{"--namesrvAddr=" + silent, "--topic", "T", "--brokerAddr", silent, "--bogus"},
	}
	for _, c := range commands {
		for _, set := range sets {
			args := append([]string{c.name}, set...)
			done := make(chan int, 1)
			go func() {
				defer func() {
					if r := recover(); r != nil {
						t.Errorf("mqadmin %s: panic %v", strings.Join(args, " "), r)
						done <- -1
					}
				}()
				done <- run(args, &bytes.Buffer{}, &bytes.Buffer{})
			}()
			select {
			case code := <-done:
				if code != 0 && code != 1 && code != -1 {
					t.Errorf("mqadmin %s: exit %d", strings.Join(args, " "), code)
				}
			case <-time.After(10 * time.Second):
				t.Fatalf("mqadmin %s: hangs", strings.Join(args, " "))
			}
		}
	}
}
