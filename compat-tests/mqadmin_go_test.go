package compattest

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestMQAdminGo: the Go mqadmin (cmd/mqadmin) against Apache's mqadmin
// 5.3.3 (MQAdminStartup from the reference jars), the same subcommands with
// the same flags on the same cluster — a rocketgo one and the Apache
// reference: their outputs must be equal — line for line, or as sets of
// lines where Apache prints a Java hash container (the topic list, the
// properties of getBrokerConfig), whose order the Go tool sorts.
func TestMQAdminGo(t *testing.T) {
	requireJava(t)
	t.Parallel() // one JVM per command, not in java/target: beside the Maven tests
	cp := toolsClasspath(t)
	for _, kind := range []string{"rocketgo", "apache"} {
		t.Run(kind, func(t *testing.T) {
			testMQAdminGo(t, startTxBroker(t, kind, "mqadmin-go-"+kind).c, cp)
		})
	}
}

func testMQAdminGo(t *testing.T, c *cluster, cp string) {
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, "conf"), 0o755); err != nil {
		t.Fatal(err)
	}
	topic, orderTopic := uniq("AdmGo"), uniq("AdmGoO")
	type step struct {
		args []string
		sets bool // compare as sets of lines
	}
	steps := []step{
		{[]string{"updateTopic", "-n", c.nsAddr, "-c", clusterName, "-t", topic, "-r", "4", "-w", "4"}, false},
		{[]string{"updateTopic", "-n", c.nsAddr, "-b", c.brokerAddr, "-t", orderTopic, "-p", "6", "-o", "true", "-a", "+message.type=FIFO"}, false},
		{[]string{"updateTopic", "-n", c.nsAddr, "-c", clusterName, "-t", orderTopic, "-o", "true", "-u", "false", "-s", "true"}, false},
		{[]string{"topicList", "-n", c.nsAddr}, true},
		{[]string{"getBrokerConfig", "-n", c.nsAddr, "-b", c.brokerAddr}, true},
		{[]string{"getBrokerConfig", "-n", c.nsAddr, "-c", clusterName}, true},
		{[]string{"deleteTopic", "-n", c.nsAddr, "-c", clusterName, "-t", topic}, false},
	}
	for _, s := range steps {
		t.Run(s.args[0], func(t *testing.T) {
			java := runJavaAdmin(t, cp, home, s.args)
			goOut := runGoAdmin(t, s.args)
			if s.sets {
				j, g := lines(java), lines(goOut)
				slices.Sort(j)
				slices.Sort(g)
				if !slices.Equal(j, g) {
					t.Errorf("mqadmin %s: line sets differ\nJava:\n%s\nGo:\n%s", strings.Join(s.args, " "), java, goOut)
				}
				return
			}
			if java != goOut {
				t.Errorf("mqadmin %s: outputs differ\nJava:\n%s\nGo:\n%s", strings.Join(s.args, " "), java, goOut)
			}
		})
	}
}

// toolsClasspath resolves Apache's 5.3.3 tools (compat-tests/java, profile
// rmq5) into a classpath, once per run.
func toolsClasspath(t *testing.T) string {
	t.Helper()
	out := filepath.Join(workDir, "tools5.classpath")
	if b, err := os.ReadFile(out); err == nil && len(b) > 0 {
		return strings.TrimSpace(string(b))
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "mvn", "-q", "-B", "-P", "rmq5", "-f", filepath.Join("java", "pom.xml"),
		"dependency:build-classpath", "-Dmdep.outputFile="+out)
	if b, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("tools classpath: %v\n%s", err, b)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	return strings.TrimSpace(string(b))
}

// runJavaAdmin runs Apache's MQAdminStartup and returns its stdout.
func runJavaAdmin(t *testing.T, cp, home string, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, "java", append([]string{"-Xmx128m", "-Duser.home=" + home, "-Drocketmq.home.dir=" + home,
		"-cp", cp, "org.apache.rocketmq.tools.command.MQAdminStartup"}, args...)...)
	cmd.Env = append(os.Environ(), "ROCKETMQ_HOME="+home)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("Java mqadmin %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

// runGoAdmin runs bin/mqadmin and returns its stdout.
func runGoAdmin(t *testing.T, args []string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, filepath.Join(binDir, "mqadmin"), args...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("Go mqadmin %v: %v\n%s%s", args, err, stdout.String(), stderr.String())
	}
	return stdout.String()
}

func lines(s string) []string { return strings.Split(strings.TrimRight(s, "\n"), "\n") }
