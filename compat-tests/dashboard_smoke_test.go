package compattest

// The cheap rocketmq-dashboard check that make test runs (its Java lane):
// the dashboard jar (built once by dashboard/run.sh build into
// /var/cache/rocketgo-dashboard, outside the clone) against one rocketgo
// cluster after dashScenario, and every REST call behind its pages
// (dashQueries: cluster, topics, consumers, producers, messages, trace,
// DLQ) must answer HTTP 200, status 0, and name what the scenario made.
// Without the jar it skips, saying so: building it takes minutes and a
// network. The comparison with Apache's answers, line by line, is make
// test-dashboard (TestDashboard). With chromium installed and a jar that
// carries the front end, three pages are opened in it too (dashSmokePages).

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"
)

// dashSmokeWants names, per query, what its answer must contain beyond
// status 0 (functions of the scenario's side: ids and names).
func dashSmokeWants(s *dashSide) map[string][]string {
	last := s.msgIDs[len(s.msgIDs)-1]
	return map[string][]string{
		"cluster list":                       {s.tg.brokerName, `"brokerServer"`, `"putTps"`},
		"topic list":                         {dashTopic, "%DLQ%" + dashCG, "%RETRY%" + dashCG, defaultTraceTopic},
		"topic list (no system, retry, DLQ)": {dashTopic},
		"topic stats":                        {`"offsetTable"`, s.tg.brokerName},
		"topic route":                        {`"queueDatas"`, s.tg.brokerName},
		"topic consumers":                    {dashCG},
		"topic consumer info":                {dashCG},
		"topic config":                       {dashTopic, s.tg.brokerName},
		"consumer group list":                {dashCG},
		"consumer group":                     {dashCG},
		"consumer topics":                    {dashTopic},
		"consumer connection":                {`"clientId"`, dashTopic},
		"consumer subscription config":       {dashCG},
		"consumer brokers":                   {s.tg.brokerName},
		"consumer running info":              {dashTopic},
		"producer connection":                {`"clientId"`},
		"messages by topic":                  {s.msgIDs[0], "dkey-0"},
		"messages by topic, a page":          {s.msgIDs[0]},
		"messages by key":                    {s.msgIDs[0], "dkey-0"},
		"message by id":                      {s.msgIDs[0], "dkey-0", dashCG},
		"message trace detail":               {s.msgIDs[0], dashPG, dashCG},
		"message trace graph":                {dashPG, dashCG},
		"DLQ messages by topic":              {last},
		"DLQ messages":                       {last},
	}
}

// TestDashboardSmoke starts the dashboard against rocketgo and asks every
// page's REST calls.
func TestDashboardSmoke(t *testing.T) {
	requireJava(t)
	jar := os.Getenv("ROCKETGO_DASHBOARD_JAR")
	if jar == "" {
		jar = "/var/cache/rocketgo-dashboard/rocketmq-dashboard.jar"
	}
	if _, err := os.Stat(jar); err != nil {
		t.Skipf("DASHBOARD NOT CHECKED: no rocketmq-dashboard jar (%v); compat-tests/dashboard/run.sh build makes it (minutes, a network)", err)
	}
	t.Parallel()
	start := time.Now()
	c := newClusterConf(t, "dash-smoke", "traceTopicEnable=true\n")
	tg := target{"rocketgo", c.nsAddr, c.brokerAddr, c.brokerName}
	s := dashScenario(t, tg)
	t.Cleanup(func() {
		for _, f := range s.stop {
			f()
		}
	})
	d := startDashboard(t, jar, tg)
	t.Logf("scenario and dashboard up: %.1fs", time.Since(start).Seconds())
	wants := dashSmokeWants(s)
	queries := dashQueries()
	// The consumer's client id (the running-info query names it) and the
	// answers that follow the consumer's rebalance come a little after
	// the scenario: every query is asked again until it answers as it
	// must, or the deadline passes.
	pending := map[string]string{}
	for _, q := range queries {
		pending[q.name] = "not asked"
	}
	waitFor(t, 90*time.Second, func() bool {
		if s.clientID == "" {
			s.clientID = dashConsumerClientID(d, tg)
		}
		for _, q := range queries {
			if _, ok := pending[q.name]; !ok {
				continue
			}
			code, body, err := q.call(d, s)
			if why := dashSmokeCheck(code, body, err, wants[q.name]); why != "" {
				pending[q.name] = why
				continue
			}
			delete(pending, q.name)
			t.Logf("%s: %.200s", q.name, body)
		}
		return len(pending) == 0
	})
	for _, q := range queries {
		if why, ok := pending[q.name]; ok {
			t.Errorf("%s: %s", q.name, why)
		}
	}
	t.Logf("dashboard smoke: %d queries, %.1fs", len(queries), time.Since(start).Seconds())
	dashSmokePages(t, d, s)
}

// dashSmokePages opens a few pages in headless Chromium, when it is there
// and the jar carries the front end, and checks that their data renders.
// What they show is compared with Apache's by TestDashboardBrowser.
func dashSmokePages(t *testing.T, d *dashboard, s *dashSide) {
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Logf("DASHBOARD PAGES NOT CHECKED: no chromium (compat-tests/dashboard/run.sh chromium installs it)")
		return
	}
	if _, b, err := d.get("/"); err != nil || !strings.Contains(string(b), `id="root"`) {
		t.Logf("DASHBOARD PAGES NOT CHECKED: the jar has no front end (compat-tests/dashboard/run.sh build)")
		return
	}
	start := time.Now()
	bctx := newBrowser(t, bin)
	pages := dashPages()[:3] // cluster, topic, consumer
	// Asked to keep the results: every page, to look at rocketgo's alone.
	results := os.Getenv("ROCKETGO_DASHBOARD_RESULTS")
	if results != "" {
		pages = dashPages()
	}
	only := regexp.MustCompile(os.Getenv("ROCKETGO_DASHBOARD_PAGES")) // a regexp of page names, to look at some
	for _, p := range pages {
		if !only.MatchString(p.name) {
			continue
		}
		v := openPage(bctx, d, s, p)
		if v.err != "" {
			t.Errorf("page %s: %s", p.name, v.err)
		} else {
			t.Logf("page %s: %d values", p.name, len(v.lines))
		}
		if results != "" {
			base := filepath.Join(results, "smoke-"+dashFileName(p.name))
			_ = os.WriteFile(base+".png", v.shot, 0o644)
			_ = os.WriteFile(base+".txt", []byte(strings.Join(v.lines, "\n")+"\n"), 0o644)
		}
	}
	t.Logf("dashboard pages: %.1fs", time.Since(start).Seconds())
}

// dashConsumerClientID reads the consumer's client id from the group's
// connection list ("" until it is there).
func dashConsumerClientID(d *dashboard, tg target) string {
	_, b, err := d.get("/consumer/consumerConnection.query?consumerGroup=" + dashCG + "&address=" + tg.brokerAddr)
	if err != nil {
		return ""
	}
	const key = `"clientId":"`
	i := strings.Index(string(b), key)
	if i < 0 {
		return ""
	}
	rest := string(b)[i+len(key):]
	if j := strings.IndexByte(rest, '"'); j > 0 {
		return rest[:j]
	}
	return ""
}

// dashSmokeCheck says what is wrong with one answer ("" when nothing).
func dashSmokeCheck(code int, body []byte, err error, wants []string) string {
	if err != nil {
		return err.Error()
	}
	b := string(body)
	if code != 200 || !strings.Contains(b, `"status":0`) {
		return fmt.Sprintf("HTTP %d: %.300s", code, b)
	}
	for _, w := range wants {
		if !strings.Contains(b, w) {
			return fmt.Sprintf("no %s in %.500s", w, b)
		}
	}
	return ""
}
