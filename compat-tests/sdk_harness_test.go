package compattest

// The official Python and Node.js 5.x SDKs (sdk_python_test.go,
// sdk_nodejs_test.go) through the gRPC proxy in both of its modes: mqproxy
// in front of the cluster ("cluster") and mqbroker --enable-proxy ("local"),
// each plaintext and TLS (the proxy serving a certificate of the test's CA,
// which the SDK verifies). One cluster per mode; per mode and transport the
// SDK's script (python/sdk_scenarios.py, nodejs/sdk_scenarios.js) runs the
// scenarios concurrently, each on topics and groups of its own, and prints
// one JSON line of facts per scenario; the assertions are here, the same for
// both SDKs, each scenario a subtest.
//
// make sdk-deps installs the pinned SDKs (python/.venv, nodejs/node_modules).
// Without them the tests skip, saying so, unless ROCKETGO_SDKS is set
// ("1", "all", or a list such as "python,nodejs"), which makes a missing SDK
// a failure (make test sets it). ROCKETGO_PROXY_IMPL=apache runs the same
// scenarios through Apache 5.3.3's proxy (needs ROCKETGO_JAVA=1): the proof
// that they encode Apache's behaviour.

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

// sdkLang is one SDK: how its script is run and what it lacks.
type sdkLang struct {
	name  string            // "python", "nodejs": subtest, ROCKETGO_SDKS and file names
	what  string            // the package and its pin, for messages
	dir   string            // where the script runs (relative to compat-tests)
	argv  []string          // the command, relative to dir
	need  string            // a file (relative to dir) present once make sdk-deps ran
	log   string            // the SDK's log file, relative to the script's HOME
	lacks map[string]string // scenario → the API the SDK lacks (the subtest skips, naming it)
}

// The scenarios, in the order their subtests run.
var sdkScenarios = []string{"normal", "fifo", "delay", "transaction", "push", "priority"}

// unserved says why the proxy under test cannot serve scenario sc ("" when
// it can): a reference proxy before 5.4 has no priority messages.
func unserved(sc string) string {
	if v := os.Getenv("ROCKETGO_REFERENCE_VERSION"); sc == "priority" && proxyImpl() == "apache" &&
		(strings.HasPrefix(v, "4.") || strings.HasPrefix(v, "5.0") || strings.HasPrefix(v, "5.1") ||
			strings.HasPrefix(v, "5.2") || strings.HasPrefix(v, "5.3")) {
		return "priority messages (Apache 5.4) through the Apache " + v + " reference proxy"
	}
	return ""
}

const (
	sdkCount   = 4  // messages per scenario (normal, FIFO, push)
	sdkTimeout = 40 // seconds a scenario may take in the script
)

// requireSDK skips (loudly) when the SDK is not installed, unless
// ROCKETGO_SDKS asks for it: then its absence fails the test.
func requireSDK(t *testing.T, l sdkLang) {
	t.Helper()
	need := filepath.Join(l.dir, l.need)
	if _, err := os.Stat(need); err == nil {
		return
	}
	want := os.Getenv("ROCKETGO_SDKS")
	if want == "1" || want == "all" || slices.Contains(strings.Split(want, ","), l.name) {
		t.Fatalf("ROCKETGO_SDKS=%s but the %s is not installed (%s missing): run make sdk-deps", want, l.what, need)
	}
	t.Skipf("SKIPPED: the %s is not installed (%s missing); make sdk-deps installs it, "+
		"and ROCKETGO_SDKS=%s makes its absence a failure", l.what, need, l.name)
}

// sdkModes are the proxy's modes under test, as startProxyImpl names them.
func sdkModes() []struct{ name, impl string } {
	if proxyImpl() == "apache" {
		return []struct{ name, impl string }{{"apache", "apache"}}
	}
	return []struct{ name, impl string }{{"cluster", "rocketgo"}, {"local", "local"}}
}

// runSDK runs every scenario of l in each proxy mode, plaintext and TLS.
func runSDK(t *testing.T, l sdkLang) {
	requireSDK(t, l)
	if proxyImpl() == "apache" {
		requireJava(t)
	}
	start := time.Now()
	pki := newTLSPKI(t)
	// Apache's proxy serves a self-signed certificate of its own in TLS test
	// mode: off, it serves these files (rocketgo's serves them either way).
	tlsJSON := fmt.Sprintf(`,"tlsTestModeEnable":false,"tlsCertPath":%q,"tlsKeyPath":%q`, pki.serverCert, pki.serverKey)
	for _, mode := range sdkModes() {
		t.Run(mode.name, func(t *testing.T) {
			c := startTxBroker(t, "rocketgo", uniq("sdk-"+l.name+"-"+mode.name)).c
			requirePop(t, c)
			pp := startProxyImpl(t, c, tlsJSON, mode.impl)
			for _, useTLS := range []bool{false, true} {
				name := "plaintext"
				if useTLS {
					name = "tls"
				}
				t.Run(name, func(t *testing.T) {
					t.Parallel() // its own topics and groups; the cluster stays up until both end
					runSDKScenarios(t, l, c, pp, useTLS, pki.ca)
				})
			}
		})
	}
	t.Cleanup(func() { t.Logf("%s: %.1fs in all", l.what, time.Since(start).Seconds()) })
}

// sdkMsg is a message as a script reports it: sent (with the receipt's
// message id) or received (with when).
type sdkMsg struct {
	ID        string            `json:"id"`
	BodyB64   string            `json:"body_b64"`
	Tag       string            `json:"tag"`
	Keys      []string          `json:"keys"`
	Props     map[string]string `json:"props"`
	MessageID string            `json:"message_id"`
	Group     string            `json:"group"`
	Attempt   int               `json:"attempt"`
	AtMs      int64             `json:"at_ms"`
	Priority  int               `json:"priority"`
}

// sdkResult is one scenario's line.
type sdkResult struct {
	Scenario    string   `json:"scenario"`
	Error       string   `json:"error"`
	Seconds     float64  `json:"seconds"`
	Sent        []sdkMsg `json:"sent"`
	Received    []sdkMsg `json:"received"`
	First       []sdkMsg `json:"first"`
	Probe       []sdkMsg `json:"probe"`
	Checked     []string `json:"checked"`
	SentAtMs    int64    `json:"sent_at_ms"`
	DeliverAtMs int64    `json:"deliver_at_ms"`
}

type sdkTarget struct {
	Topic string `json:"topic"`
	Group string `json:"group"`
}

// runSDKScenarios creates each scenario's topic and group, runs the script
// once and asserts on its lines, one subtest per scenario.
func runSDKScenarios(t *testing.T, l sdkLang, c *cluster, pp *proxyProc, useTLS bool, caFile string) {
	targets := map[string]sdkTarget{}
	types := map[string]string{"normal": "NORMAL", "fifo": "FIFO", "delay": "DELAY", "transaction": "TRANSACTION", "push": "NORMAL",
		"priority": "PRIORITY"}
	for _, sc := range sdkScenarios {
		if _, lacks := l.lacks[sc]; lacks || unserved(sc) != "" {
			continue
		}
		tg := sdkTarget{Topic: uniq("SDK" + sc), Group: uniq("SDKG" + sc)}
		createTypedTopic(t, c, tg.Topic, types[sc])
		if sc == "fifo" {
			createOrderlyGroup(t, c, tg.Group)
		}
		targets[sc] = tg
	}
	cfg, _ := json.Marshal(map[string]any{
		"endpoint": pp.addr, "tls": useTLS, "count": sdkCount, "timeout_s": sdkTimeout, "scenarios": targets,
	})
	home := filepath.Join(workDir, uniq("sdk-"+l.name))
	if err := os.MkdirAll(home, 0o755); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), (sdkTimeout+20)*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, l.argv[0], l.argv[1:]...)
	cmd.Dir = l.dir
	cmd.Env = append(os.Environ(), "HOME="+home, "SDK_TEST_CONFIG="+string(cfg),
		"GRPC_DEFAULT_SSL_ROOTS_FILE_PATH="+caFile)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	start := time.Now()
	runErr := cmd.Run()
	t.Logf("%s via %s (tls=%v): %.1fs", l.what, pp.addr, useTLS, time.Since(start).Seconds())
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("script stderr:\n%s\n----- tail of %s -----\n%s", tail(stderr.String(), 40),
				l.log, tailFile(filepath.Join(home, l.log), 40))
		}
	})
	results := map[string]sdkResult{}
	for _, line := range strings.Split(stdout.String(), "\n") {
		if !strings.HasPrefix(line, "{") {
			continue
		}
		var r sdkResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Errorf("script line %q: %v", line, err)
			continue
		}
		if r.Scenario == "shutdown" {
			t.Errorf("%s", r.Error)
		}
		results[r.Scenario] = r
	}
	for _, sc := range sdkScenarios {
		t.Run(sc, func(t *testing.T) {
			if why, lacks := l.lacks[sc]; lacks {
				t.Skipf("SKIPPED: the %s lacks %s", l.what, why)
			}
			if why := unserved(sc); why != "" {
				t.Skipf("SKIPPED: %s", why)
			}
			r, ok := results[sc]
			switch {
			case !ok:
				t.Fatalf("no result line (script: %v)", runErr)
			case r.Error != "":
				t.Fatalf("the script's scenario failed: %s", r.Error)
			}
			t.Logf("%.1fs in the script", r.Seconds)
			sdkChecks[sc](t, r)
		})
	}
	if runErr != nil && !t.Failed() {
		t.Errorf("script: %v", runErr)
	}
}

var sdkChecks = map[string]func(*testing.T, sdkResult){
	"normal":      checkSDKNormal,
	"fifo":        checkSDKFIFO,
	"delay":       checkSDKDelay,
	"transaction": checkSDKTransaction,
	"push":        checkSDKPush,
	"priority":    checkSDKPriority,
}

// checkSDKPriority: received one at a time, the messages came highest
// priority first (two of each, in send order within a priority), each with
// the priority it was sent with.
func checkSDKPriority(t *testing.T, r sdkResult) {
	if len(r.Sent) != 2*sdkCount {
		t.Fatalf("sent %d messages, want %d", len(r.Sent), 2*sdkCount)
	}
	got := receivedOnce(t, r.Sent, r.Received)
	want := slices.Clone(r.Sent)
	slices.SortStableFunc(want, func(a, b sdkMsg) int { return b.Priority - a.Priority })
	if ids := sdkIDs(r.Received); !slices.Equal(ids, sdkIDs(want)) {
		t.Errorf("received in the order %v, want %v", ids, sdkIDs(want))
	}
	for _, s := range r.Sent {
		if g, ok := got[s.ID]; ok && g.Priority != s.Priority {
			t.Errorf("%s received with priority %d, sent %d", s.ID, g.Priority, s.Priority)
		}
	}
}

// checkSDKNormal: each message received once (and not the other tag's),
// body, tag, keys, user properties and message id as sent.
func checkSDKNormal(t *testing.T, r sdkResult) {
	if len(r.Sent) != sdkCount {
		t.Fatalf("sent %d messages, want %d", len(r.Sent), sdkCount)
	}
	for _, s := range r.Sent {
		if s.Tag != "TagA" || len(s.Keys) != 2 || len(s.Props) < 3 || s.MessageID == "" {
			t.Fatalf("the script sent %+v: want a tag, two keys, user properties and a receipt's message id", s)
		}
	}
	got := receivedOnce(t, r.Sent, r.Received)
	for _, s := range r.Sent {
		g, ok := got[s.ID]
		if !ok {
			continue
		}
		if g.BodyB64 != s.BodyB64 {
			t.Errorf("%s body %s, sent %s (base64)", s.ID, g.BodyB64, s.BodyB64)
		}
		if g.Tag != s.Tag {
			t.Errorf("%s tag %q, sent %q", s.ID, g.Tag, s.Tag)
		}
		if !slices.Equal(g.Keys, s.Keys) {
			t.Errorf("%s keys %q, sent %q", s.ID, g.Keys, s.Keys)
		}
		if !maps.Equal(g.Props, s.Props) {
			t.Errorf("%s user properties %v, sent %v", s.ID, g.Props, s.Props)
		}
		if g.MessageID != s.MessageID {
			t.Errorf("%s message id %q, the send receipt's %q", s.ID, g.MessageID, s.MessageID)
		}
		if g.Attempt != 1 {
			t.Errorf("%s delivery attempt %d, want 1", s.ID, g.Attempt)
		}
	}
}

// checkSDKFIFO: the first receive holds the first message; while it is
// neither acked nor expired, a receive of the group gets none of its group;
// all arrive in send order, with their message group.
func checkSDKFIFO(t *testing.T, r sdkResult) {
	if len(r.Sent) != sdkCount {
		t.Fatalf("sent %d messages, want %d", len(r.Sent), sdkCount)
	}
	if len(r.First) != 1 || r.First[0].ID != r.Sent[0].ID {
		t.Errorf("first receive (batch 1) got %v, want [%s]", sdkIDs(r.First), r.Sent[0].ID)
	}
	if len(r.Probe) != 0 {
		t.Errorf("a blocked message group was overtaken: a receive while %s was invisible and unacked got %v",
			r.Sent[0].ID, sdkIDs(r.Probe))
	}
	if got, want := sdkIDs(r.Received), sdkIDs(r.Sent); !slices.Equal(got, want) {
		t.Errorf("received %v, want %v in send order", got, want)
	}
	for _, g := range r.Received {
		if g.Group != "fifo-group-1" {
			t.Errorf("%s message group %q, sent fifo-group-1", g.ID, g.Group)
		}
	}
}

// sdkDelaySlack is how much earlier than its delivery time a timer message
// may be received (clock reads around the receive; the due time is a whole
// second, a timer slot's start).
const sdkDelaySlack = 250 * time.Millisecond

// checkSDKDelay: the delay message is received once, not before its
// delivery time, and within 15 s after it.
func checkSDKDelay(t *testing.T, r sdkResult) {
	if len(r.Sent) != 1 || r.DeliverAtMs-r.SentAtMs < 2000 {
		t.Fatalf("the script sent %d messages due %d ms after the send, want one 3-4 s ahead", len(r.Sent), r.DeliverAtMs-r.SentAtMs)
	}
	got := receivedOnce(t, r.Sent, r.Received)
	g, ok := got[r.Sent[0].ID]
	if !ok {
		return
	}
	early := time.Duration(r.DeliverAtMs-g.AtMs) * time.Millisecond
	switch {
	case early > sdkDelaySlack:
		t.Errorf("received %s before its delivery time (sent %d ms before it)", early, r.DeliverAtMs-r.SentAtMs)
	case -early > 15*time.Second:
		t.Errorf("received %s after its delivery time", -early)
	default:
		t.Logf("received %d ms after its delivery time", -early.Milliseconds())
	}
	if g.BodyB64 != r.Sent[0].BodyB64 {
		t.Errorf("body %s, sent %s (base64)", g.BodyB64, r.Sent[0].BodyB64)
	}
}

// checkSDKTransaction: the committed message and the orphan the checker
// committed arrive once each, the rolled back one never; the broker's check
// reached the checker for the orphan alone.
func checkSDKTransaction(t *testing.T, r sdkResult) {
	n := map[string]int{}
	for _, g := range r.Received {
		n[g.ID]++
	}
	if n["t-commit"] != 1 || n["t-orphan"] != 1 {
		t.Errorf("received %v: want t-commit and t-orphan (committed by the checker) once each", sdkIDs(r.Received))
	}
	if n["t-rollback"] != 0 {
		t.Errorf("the rolled back message was delivered (%v)", sdkIDs(r.Received))
	}
	if !slices.Contains(r.Checked, "t-orphan") {
		t.Errorf("the checker saw %v: want the broker's check of t-orphan", r.Checked)
	}
	for _, id := range []string{"t-commit", "t-rollback"} {
		if slices.Contains(r.Checked, id) {
			t.Errorf("the ended transaction %s was checked (checks %v)", id, r.Checked)
		}
	}
}

// checkSDKPush: the push consumer's listener saw each message once, intact.
func checkSDKPush(t *testing.T, r sdkResult) {
	if len(r.Sent) != sdkCount {
		t.Fatalf("sent %d messages, want %d", len(r.Sent), sdkCount)
	}
	got := receivedOnce(t, r.Sent, r.Received)
	for _, s := range r.Sent {
		if g, ok := got[s.ID]; ok && (g.BodyB64 != s.BodyB64 || g.Tag != s.Tag) {
			t.Errorf("%s arrived as body %s tag %q, sent %s %q", s.ID, g.BodyB64, g.Tag, s.BodyB64, s.Tag)
		}
	}
}

// receivedOnce checks that each sent message was received exactly once and
// nothing else was, and returns the received ones by id.
func receivedOnce(t *testing.T, sent, received []sdkMsg) map[string]sdkMsg {
	t.Helper()
	want := map[string]bool{}
	for _, s := range sent {
		want[s.ID] = true
	}
	got := map[string]sdkMsg{}
	n := map[string]int{}
	for _, g := range received {
		n[g.ID]++
		got[g.ID] = g
		if !want[g.ID] {
			t.Errorf("received %q, which was not sent here (or not to this filter)", g.ID)
		}
	}
	var missing []string
	for _, s := range sent {
		switch {
		case n[s.ID] == 0:
			missing = append(missing, s.ID)
		case n[s.ID] > 1:
			t.Errorf("%s received %d times", s.ID, n[s.ID])
		}
	}
	if len(missing) > 0 {
		t.Errorf("not received: %v (received %v)", missing, sdkIDs(received))
	}
	return got
}

func sdkIDs(ms []sdkMsg) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.ID
	}
	return out
}
