package main

import (
	"bytes"
	"os"
	"strings"
	"testing"
)

// apacheHelp reads testdata/apache-5.5.0-help.txt: what Apache 5.5.0's
// mqadmin printed for "mqadmin help <cmd>", for each of its commands
// (captured through compat-tests/java/mqadmin/MQAdminBatch.java; never
// regenerated), by command name.
func apacheHelp(t *testing.T) map[string]string {
	t.Helper()
	b, err := os.ReadFile("testdata/apache-5.5.0-help.txt")
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, block := range strings.Split(string(b), "\n@@mqadmin-batch-end@@\n") {
		rest, ok := strings.CutPrefix(block, "usage: mqadmin ")
		if !ok {
			continue
		}
		name, _, _ := strings.Cut(rest, " ")
		out[name] = block
	}
	return out
}

// TestHelpLikeApache: "mqadmin help <cmd>" prints, for every command, the
// usage block Apache 5.5.0's prints (commons-cli's HelpFormatter: required
// options unbracketed, groups, wrapping at 110 columns), and the command
// list names each command with Apache's description.
func TestHelpLikeApache(t *testing.T) {
	want := apacheHelp(t)
	list, err := os.ReadFile("testdata/apache-5.5.0-commands.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range commands {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			if rc := run([]string{"help", c.name}, &out, &errOut); rc != 0 {
				t.Fatalf("rc %d: %s", rc, errOut.String())
			}
			w, ok := want[c.name]
			if !ok {
				t.Fatalf("Apache 5.5.0 has no command %s", c.name)
			}
			if out.String() != w {
				t.Errorf("help %s:\n%s\nApache's:\n%s", c.name, out.String(), w)
			}
			line := "   " + padRight(c.name, 35) + " " + c.desc + "\n"
			if !strings.Contains(string(list), line) {
				t.Errorf("command list: Apache's has no line %q", line)
			}
		})
	}
}

func padRight(s string, n int) string {
	if len(s) >= n {
		return s
	}
	return s + strings.Repeat(" ", n-len(s))
}

// TestParseLikeCommonsCLI: the command lines DefaultParser accepts and the
// messages of those it refuses (as Apache 5.5.0's mqadmin printed them on
// stderr, before its usage on stdout and exit 1).
func TestParseLikeCommonsCLI(t *testing.T) {
	decl := func() (*options, map[string]*string, *bool) {
		o := newOptions("mqadmin x")
		o.Bool("h", "help", "Print help")
		v := map[string]*string{}
		v["n"] = o.String("n", "namesrvAddr", "ns")
		v["b"] = o.String("b", "brokerAddr", "create topic to which broker")
		v["c"] = o.String("c", "clusterName", "create topic to which cluster")
		o.Group(true, "b", "c")
		v["t"] = o.Req("t", "topic", "topic name")
		v["s"] = o.String("s", "timestamp", "ts")
		v["attributes"] = o.String("", "attributes", "attrs")
		l := o.Bool("l", "list", "list")
		return o, v, l
	}
	for _, tc := range []struct {
		name string
		args []string
		want map[string]string // values; "l" "true" for the flag
		err  string
	}{
		{"short", []string{"-n", "a:1", "-b", "b:2", "-t", "T"}, map[string]string{"n": "a:1", "b": "b:2", "t": "T"}, ""},
		{"long", []string{"--namesrvAddr", "a:1", "--clusterName=C", "--topic", "T", "--list"}, map[string]string{"n": "a:1", "c": "C", "t": "T", "l": "true"}, ""},
		{"attached", []string{"-na:1", "-cC", "-tT"}, map[string]string{"n": "a:1", "c": "C", "t": "T"}, ""},
		{"equals", []string{"-n=a:1", "-c=C", "-t=T"}, map[string]string{"n": "a:1", "c": "C", "t": "T"}, ""},
		{"long with one dash", []string{"-namesrvAddr", "a:1", "-c", "C", "-topic", "T"}, map[string]string{"n": "a:1", "c": "C", "t": "T"}, ""},
		{"prefix", []string{"--namesrv", "a:1", "--cluster", "C", "--top", "T"}, map[string]string{"n": "a:1", "c": "C", "t": "T"}, ""},
		{"negative number", []string{"-c", "C", "-t", "T", "-s", "-1"}, map[string]string{"c": "C", "t": "T", "s": "-1"}, ""},
		{"quoted", []string{"-c", `"C"`, "-t", "T"}, map[string]string{"c": "C", "t": "T"}, ""},
		{"first of two", []string{"-c", "C", "-t", "T", "-t", "U"}, map[string]string{"c": "C", "t": "T"}, ""},
		{"long only", []string{"-c", "C", "-t", "T", "--attributes", "+a=b"}, map[string]string{"c": "C", "t": "T", "attributes": "+a=b"}, ""},
		{"ignored argument", []string{"-c", "C", "x", "-t", "T"}, map[string]string{"c": "C", "t": "T"}, ""},
		{"missing", []string{"-c", "C"}, nil, "Missing required option: t"},
		{"missing two", []string{"-n", "x"}, nil, "Missing required options: [-b create topic to which broker, -c create topic to which cluster], t"},
		{"no value", []string{"-c", "C", "-t"}, nil, "Missing argument for option: t"},
		{"no value before option", []string{"-c", "-t", "T"}, nil, "Missing argument for option: c"},
		{"unknown", []string{"--foo"}, nil, "Unrecognized option: --foo"},
		{"unknown short", []string{"-z"}, nil, "Unrecognized option: -z"},
		{"group twice", []string{"-b", "x", "-c", "y", "-t", "t"}, nil, "The option 'c' was specified but an option from this group has already been selected: 'b'"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, v, l := decl()
			err := o.parse(tc.args)
			if tc.err != "" {
				if err == nil || err.Error() != tc.err {
					t.Fatalf("error %v, want %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			for k, p := range v {
				if *p != tc.want[k] {
					t.Errorf("-%s = %q, want %q", k, *p, tc.want[k])
				}
			}
			if *l != (tc.want["l"] == "true") {
				t.Errorf("-l = %t", *l)
			}
		})
	}
}

// TestParseErrorExit: a refused command line prints commons-cli's message
// on stderr and the usage on stdout, exit 1; -h the usage, exit 0.
func TestParseErrorExit(t *testing.T) {
	var out, errOut bytes.Buffer
	if rc := run([]string{"topicRoute", "-n", "127.0.0.1:1"}, &out, &errOut); rc != 1 {
		t.Fatalf("rc %d", rc)
	}
	if errOut.String() != "Missing required option: t\n" || out.String() != apacheHelp(t)["topicRoute"] {
		t.Fatalf("stderr %q stdout %q", errOut.String(), out.String())
	}
	out.Reset()
	errOut.Reset()
	if rc := run([]string{"topicroute", "-t", "T", "-h"}, &out, &errOut); rc != 0 || out.String() != apacheHelp(t)["topicRoute"] {
		t.Fatalf("rc %d stdout %q stderr %q", rc, out.String(), errOut.String())
	}
}
