package compattest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// TestMQAdminTable: the Go mqadmin and Apache 5.5.0's (MQAdminStartup from
// the reference jars, reference/run.sh classpath) on one rocketgo cluster,
// command after command, Java's first: the usage block of every Go command
// ("help <cmd>"), then the daily commands — topics, groups, offsets, name
// server and KV configs, write permission, cleanup, a send and its
// consumption and printing, then with clients online (mqadminClientSteps)
// — with short and long options; outputs equal
// line for line, or as sets of lines where Apache prints a Java hash
// container the Go tool sorts. Then refused command lines and a failed
// request, each in a JVM of its own (commons-cli's refusal ends the JVM):
// stdout, stderr and exit codes.
func TestMQAdminTable(t *testing.T) {
	requireJava(t)
	t.Parallel()
	cp := referenceClasspath(t)
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	c := newClusterConf(t, "mqadmin-table", liteBrokerConf) // lite topics too
	java := startJavaAdmin(t, cp, home)
	start := time.Now()

	var help []mqadminStep
	for _, name := range goAdminCommands(t) {
		help = append(help, mqadminStep{args: []string{"help", name}})
	}
	t.Run("help", func(t *testing.T) { runMQAdminSteps(t, java, help) })

	ns, b, bn := c.nsAddr, c.brokerAddr, c.brokerName
	topic, group, group2 := uniq("AdmT"), uniq("AdmG"), uniq("AdmG2")
	// the batch commands' files: fields left out take the class defaults
	listGroup := uniq("AdmGL")
	topicsFile, groupsFile := filepath.Join(home, "topics.json"), filepath.Join(home, "groups.json")
	if err := os.WriteFile(topicsFile, []byte(`[{"topicName":"`+uniq("AdmTL")+`","readQueueNums":2,"writeQueueNums":2},{"topicName":"`+
		uniq("AdmTL")+`","perm":4}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(groupsFile, []byte(`[{"groupName":"`+listGroup+`","retryMaxTimes":3}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	steps := []mqadminStep{
		{args: []string{"updateTopic", "--namesrvAddr", ns, "--clusterName=" + clusterName, "-t", topic, "-r", "4", "-w", "4"}},
		{args: []string{"updateTopic", "-n" + ns, "-c", clusterName, "-t", "%RETRY%" + group, "-r", "1", "-w", "1"}},
		{args: []string{"updateTopic", "-n", ns, "-c", clusterName, "-t", "%RETRY%" + group2, "-r", "1", "-w", "1"}},
		{args: []string{"updateSubGroup", "-n", ns, "-c", clusterName, "-g", group}},
		{args: []string{"updateSubGroup", "-n", ns, "-b", b, "--groupName", group2}},
		{args: []string{"topicRoute", "--namesrvAddr=" + ns, "--topic", topic, "--list"}},
		{args: []string{"topicRoute", "-n", ns, "-t", topic}},
		{args: []string{"updateTopicList", "-n", ns, "-b", b, "-f", topicsFile}},
		{args: []string{"updateTopicList", "-n", ns, "-c", clusterName, "-f", topicsFile}},
		{args: []string{"updateSubGroupList", "-n", ns, "-b", b, "-f", groupsFile}},
		{args: []string{"getConsumerConfig", "-n", ns, "-g", listGroup}},
		{args: []string{"topicClusterList", "-n", ns, "-t", topic}},
		{args: []string{"topicList", "-n", ns, "-c"}, sets: true},
		{args: []string{"getNamesrvConfig", "-n", ns}, sets: true},
		{args: []string{"updateNamesrvConfig", "-n", ns, "-k", "clusterTest", "-v", "false"}},
		{args: []string{"updateKvConfig", "-n", ns, "-s", "AdmNS", "-k", "k1", "-v", "v1"}},
		{args: []string{"deleteKvConfig", "-n", ns, "-s", "AdmNS", "-k", "k1"}},
		{args: []string{"updateOrderConf", "-n", ns, "-t", topic, "-m", "put", "-v", bn + ":4"}},
		{args: []string{"updateOrderConf", "-n", ns, "-t", topic, "-m", "get"}},
		{args: []string{"updateOrderConf", "-n", ns, "-t", topic, "-m", "delete"}},
		// the route shows a new perm once the broker registers it again
		{args: []string{"updateTopicPerm", "-n", ns, "-b", b, "-t", topic, "-p", "4"},
			between: []string{"updateTopicPerm", "-n", ns, "-b", b, "-t", topic, "-p", "6"}, settle: routePerm(ns, topic, 6)},
		{args: []string{"updateTopicPerm", "-n", ns, "-b", b, "-t", topic, "-p", "4"}, settle: routePerm(ns, topic, 4)}, // "new perm equals to the old one!"
		{args: []string{"updateTopicPerm", "-n", ns, "-c", clusterName, "-t", topic, "-p", "6"},
			between: []string{"updateTopicPerm", "-n", ns, "-b", b, "-t", topic, "-p", "4"}, settle: routePerm(ns, topic, 4)},
		{args: []string{"wipeWritePerm", "-n", ns, "-b", bn}},
		{args: []string{"addWritePerm", "-n", ns, "--brokerName", bn}},
		{args: []string{"getConsumerConfig", "-n", ns, "-g", group}},
		{args: []string{"allocateMQ", "-n", ns, "-t", topic, "-i", "10.0.0.1,10.0.0.2,10.0.0.3"}},
		{args: []string{"statsAll", "-n", ns, "-t", topic}}, // before any message: no rate moves between the runs
		{args: []string{"cleanExpiredCQ", "-n", ns, "-b", b}},
		{args: []string{"cleanExpiredCQ", "-n", ns, "-c", clusterName}},
		{args: []string{"cleanUnusedTopic", "-n", ns}},
		{args: []string{"deleteExpiredCommitLog", "-n", ns, "-b", b}},
		// Apache's sendMessage and consumeMessage keep their client for the
		// JVM's life: each runs once in the batch.
		{args: []string{"sendMessage", "-n", ns, "-t", topic, "-p", "hello mqadmin", "-k", "AdmKey", "-c", "TagA", "-b", bn, "-i", "0"}, norm: sendMsgIDNorm},
		{args: []string{"consumeMessage", "-n", ns, "-t", topic, "-b", bn, "-i", "0"}},
		{args: []string{"printMsg", "-n", ns, "-t", topic}},
		{args: []string{"printMsg", "-n", ns, "-t", topic, "-s", "TagB", "-d", "false"}},
		{args: []string{"printMsgByQueue", "-n", ns, "-t", topic, "-a", bn, "-i", "0", "-p", "true", "-d", "true", "-f", "true"}},
		{args: []string{"skipAccumulatedMessage", "-n", ns, "-g", group, "-t", topic}, sets: true},
		{args: []string{"cloneGroupOffset", "-n", ns, "-s", group, "-d", group2, "-t", topic}},
		{args: []string{"brokerConsumeStats", "-n", ns, "-b", b}, sets: true},
		{args: []string{"resetOffsetByTime", "-n", ns, "-g", group, "-t", topic, "-s", "0"}, sets: true},
	}
	t.Run("commands", func(t *testing.T) { runMQAdminSteps(t, java, steps) })
	t.Run("query", func(t *testing.T) {
		// the two messages sent (one by each tool) under the key, then one by
		// its UNIQ_KEY (Apache's command runs once per JVM, as sendMessage)
		var ids []string
		for _, l := range lines(runGoAdmin(t, []string{"queryMsgByKey", "-n", ns, "-t", topic, "-k", "AdmKey"}))[1:] {
			if f := strings.Fields(l); len(f) >= 3 {
				ids = append(ids, f[0])
			}
		}
		if len(ids) != 2 {
			t.Fatalf("queryMsgByKey AdmKey: %v", ids)
		}
		runMQAdminSteps(t, java, []mqadminStep{
			{args: []string{"queryMsgByKey", "-n", ns, "-t", topic, "-k", "AdmKey"}, sets: true},
			{args: []string{"queryMsgByUniqueKey", "-n", ns, "-t", topic, "-i", ids[0]}},
		})
	})
	t.Run("clients", func(t *testing.T) { mqadminClientSteps(t, java, c, cp) })
	t.Run("ops", func(t *testing.T) { mqadminOpsSteps(t, java, c) })
	t.Run("lite", func(t *testing.T) { mqadminLiteSteps(t, java, c) })

	t.Run("exit", func(t *testing.T) {
		for _, tc := range []struct {
			args            []string
			javaRC, goRC    int
			stderr          string // both print it (Java: the first line)
			usageOnStdout   bool
			emptyStdoutBoth bool
		}{
			{[]string{"topicRoute", "-n", ns}, 1, 1, "Missing required option: t", true, false},
			{[]string{"updateTopic", "-n", ns, "--topic=X", "-b", b, "-c", clusterName}, 1, 1,
				"The option 'c' was specified but an option from this group has already been selected: 'b'", true, false},
			{[]string{"topicRoute", "-n", ns, "-t"}, 1, 1, "Missing argument for option: t", true, false},
			{[]string{"topicRoute", "-n", ns, "--no-such-option"}, 1, 1, "Unrecognized option: --no-such-option", true, false},
			// a refused request: Apache prints a stack trace and exits 0, the Go tool its error and 1
			{[]string{"topicRoute", "--namesrvAddr", ns, "-tAdmNoSuchTopic"}, 0, 1, "No topic route info in name server for the topic: AdmNoSuchTopic", false, true},
		} {
			jOut, jErr, jRC := runJavaAdminOnce(t, cp, home, tc.args)
			gOut, gErr, gRC := runGoAdminRC(t, tc.args)
			if jRC != tc.javaRC || gRC != tc.goRC {
				t.Errorf("%v: exit codes Java %d Go %d, want %d %d\nJava stderr:\n%s\nGo stderr:\n%s", tc.args, jRC, gRC, tc.javaRC, tc.goRC, jErr, gErr)
			}
			if !strings.Contains(jErr, tc.stderr) || !strings.Contains(gErr, tc.stderr) {
				t.Errorf("%v: stderr lacks %q\nJava:\n%s\nGo:\n%s", tc.args, tc.stderr, jErr, gErr)
			}
			if tc.usageOnStdout && (jOut != gOut || !strings.HasPrefix(gOut, "usage: mqadmin "+tc.args[0]+" ")) {
				t.Errorf("%v: stdout differs\nJava:\n%s\nGo:\n%s", tc.args, jOut, gOut)
			}
			if tc.emptyStdoutBoth && (jOut != "" || gOut != "") {
				t.Errorf("%v: stdout Java %q Go %q, want none", tc.args, jOut, gOut)
			}
		}
	})
	t.Logf("TestMQAdminTable: %d help blocks and %d commands compared in %v", len(help), len(steps), time.Since(start).Round(time.Second))
}

// sendMsgIDNorm masks sendMessage's #MsgId, the UNIQ_KEY each client makes
// from its own address, process id and clock. Broker name, queue and
// status stay compared.
func sendMsgIDNorm(s string) string { return sendMsgID.ReplaceAllString(s, "${1}MSGID") }

var sendMsgID = regexp.MustCompile(`(?m)^(\S+\s+\d+\s+SEND_OK\s+)[0-9A-F]+$`)

// routePerm waits until the name server's route of topic has perm.
func routePerm(ns, topic string, perm int) func(t *testing.T) {
	return func(t *testing.T) {
		t.Helper()
		want := fmt.Sprintf(`"perm":%d,`, perm)
		if !waitFor(t, 30*time.Second, func() bool {
			return strings.Contains(runGoAdmin(t, []string{"topicRoute", "-n", ns, "-t", topic}), want)
		}) {
			t.Fatalf("route of %s: perm %d not shown within 30 s", topic, perm)
		}
	}
}

// goAdminCommands is the Go mqadmin's command list ("mqadmin" alone).
func goAdminCommands(t *testing.T) []string {
	t.Helper()
	var names []string
	for _, l := range lines(runGoAdmin(t, nil)) {
		if f := strings.Fields(l); strings.HasPrefix(l, "   ") && len(f) > 0 {
			names = append(names, f[0])
		}
	}
	if len(names) < 30 {
		t.Fatalf("Go mqadmin lists %d commands: %v", len(names), names)
	}
	return names
}

// runJavaAdminOnce runs Apache's mqadmin in a JVM of its own: stdout, the
// stderr lines that are not the JVM's logging, and the exit code.
func runJavaAdminOnce(t *testing.T, cp, home string, args []string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-Xmx128m", "-Duser.home=" + home, "-Drocketmq.home.dir=" + home,
		"-cp", cp, "org.apache.rocketmq.tools.command.MQAdminStartup"}, args...)...)
	cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("Java mqadmin %v: %v\n%s", args, err, stderr.String())
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}

// runGoAdminRC runs bin/mqadmin: stdout, stderr, exit code.
func runGoAdminRC(t *testing.T, args []string) (string, string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "mqadmin"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		t.Fatalf("Go mqadmin %v: %v", args, err)
	}
	return stdout.String(), stderr.String(), cmd.ProcessState.ExitCode()
}
