package compattest

// rocketmq-dashboard's pages in a browser (headless Chromium, Debian's
// package, driven over the DevTools protocol by chromedp), the second half
// of TestDashboard: on each side, after the scenario, every page is opened,
// its form filled as an operator would, and once its data has rendered a
// screenshot is taken and the values it shows (table rows by column, every
// other visible text) are read from the DOM, masked where two brokers
// cannot agree, and compared. Every difference fails unless
// dashboardPageDiffs lists it. ROCKETGO_DASHBOARD_RESULTS=DIR keeps the
// screenshots (each side, and both side by side) and the values there.
//
// chromedp rather than Playwright: it is a Go module, so the test drives
// the browser from the harness that starts the servers (t.Cleanup, waitFor,
// the scenario's ids for masking) with no Node.js process in between, and
// it needs only the chromium binary, no driver.

import (
	"bytes"
	"context"
	"fmt"
	"image"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/chromedp/chromedp/kb"
)

// dashboardPageDiffs are the known differences ("page: side line", the line
// as read and masked), and why. A key ending in "*" matches every line that
// starts with it.
var dashboardPageDiffs = map[string]string{}

// dashPage is one page of the dashboard.
type dashPage struct {
	name  string
	route string // after the '#' of the single-page app
	// fill is what an operator does before the data shows (nil: nothing).
	fill func(s *dashSide) []chromedp.Action[chromedp.Void]
	// ready are texts that show once the page's data has rendered.
	ready func(s *dashSide) []string
}

// dashChoose picks value in the first antd Select under scope as a person
// does: click its search box, type, take the first match with Enter.
func dashChoose(scope, value string) chromedp.Action[chromedp.Void] {
	sel := scope + " .ant-select-selection-search-input"
	return chromedp.Steps(
		chromedp.Click(chromedp.CSS(sel)),
		chromedp.SendKeys(chromedp.CSS(sel), value),
		chromedp.WaitVisible(chromedp.CSS(`.ant-select-dropdown:not(.ant-select-dropdown-hidden) .ant-select-item-option`)),
		chromedp.SendKeys(chromedp.CSS(sel), kb.Enter),
	)
}

func dashClickTab(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.Click(chromedp.Search(fmt.Sprintf(`//div[@role="tab" and normalize-space(.)=%q]`, name))), dashSettle())
}

const dashPane = `.ant-tabs-tabpane-active`

// dashDateRange types a wide range into the active pane's Begin and End
// pickers. Their defaults are moment objects, which antd 5's pickers show
// as the day's midnight and the search sends as one instant, so the
// default search finds nothing on any broker; typed dates come back as
// dayjs objects, which the message page's Topic tab reads.
func dashDateRange() chromedp.Action[chromedp.Void] {
	typeDate := func(n int, value string) chromedp.Action[chromedp.Void] {
		sel := chromedp.Search(fmt.Sprintf(`(//div[contains(@class,"ant-tabs-tabpane-active")]//div[contains(@class,"ant-picker")]//input)[%d]`, n))
		return chromedp.Steps(
			chromedp.Click(sel),
			chromedp.SendKeys(sel, kb.End+strings.Repeat(kb.Backspace, 24)+value+kb.Enter),
		)
	}
	return chromedp.Steps(typeDate(1, "2000-01-01 00:00:00"), typeDate(2, "2099-12-31 23:59:59"),
		// A click while a picker's panel is open only closes it.
		chromedp.WaitNotPresent(chromedp.CSS(`.ant-picker-dropdown:not(.ant-picker-dropdown-hidden)`)), dashSettle())
}

// dashSettle waits for the page to stop moving: each route slides in
// (framer-motion), and a click computed during the slide lands beside its
// target.
func dashSettle() chromedp.Action[chromedp.Void] {
	const js = `(() => {
  const e = document.querySelector('.ant-layout-content > *');
  if (!e) return false;
  const r = e.getBoundingClientRect(), k = r.x + ',' + r.y + ',' + r.width + ',' + r.height;
  const same = window.__dashLast === k;
  window.__dashLast = k;
  return same && document.getAnimations().every(a => a.playState !== 'running');
})()`
	return func(ctx context.Context, t *chromedp.Target) (chromedp.Void, error) {
		_, err := chromedp.Poll[bool](js, chromedp.WithPollingInterval(150*time.Millisecond))(ctx, t)
		return chromedp.Void{}, err
	}
}

// dashCheck ticks the checkbox labelled name.
func dashCheck(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Click(chromedp.Search(fmt.Sprintf(`//label[contains(@class,"ant-checkbox-wrapper") and normalize-space(.)=%q]`, name)))
}

func dashPages() []dashPage {
	return []dashPage{
		{name: "cluster", route: "/cluster", ready: func(s *dashSide) []string { return []string{s.tg.brokerName} }},
		// Beside NORMAL (the default filter): the scenario's topic has no
		// message.type attribute, and its retry and DLQ topics.
		{name: "topic", route: "/topic",
			fill: func(*dashSide) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{dashCheck("UNSPECIFIED"), dashCheck("RETRY"), dashCheck("DLQ")}
			},
			ready: func(s *dashSide) []string { return []string{dashTopic, "%RETRY%" + dashCG, "%DLQ%" + dashCG} }},
		{name: "consumer", route: "/consumer", ready: func(s *dashSide) []string { return []string{dashCG} }},
		{name: "producer", route: "/producer",
			fill: func(s *dashSide) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					dashChoose(`#deployHistoryList`, dashTopic),
					chromedp.SendKeys(chromedp.CSS(`#deployHistoryList input#producerGroup`), dashPG),
					chromedp.Click(chromedp.CSS(`#deployHistoryList button[type=submit]`)),
				}
			},
			ready: func(s *dashSide) []string { return []string{"dash-prod-" + s.tg.name} }},
		{name: "message", route: "/message",
			fill: func(s *dashSide) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					dashChoose(dashPane, dashTopic),
					dashDateRange(),
					chromedp.Click(chromedp.CSS(dashPane + ` button:has(.anticon-search)`)),
				}
			},
			ready: func(s *dashSide) []string { return s.msgIDs }},
		{name: "message by key", route: "/message",
			fill: func(s *dashSide) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					dashClickTab("Message Key"),
					dashChoose(dashPane, dashTopic),
					chromedp.SendKeys(chromedp.CSS(dashPane+` input:not(.ant-select-selection-search-input)`), "dkey-0"),
					chromedp.Click(chromedp.CSS(dashPane + ` button:has(.anticon-search)`)),
				}
			},
			ready: func(s *dashSide) []string { return s.msgIDs[:1] }},
		// By message id: the Consumer tab's search reads its pickers through
		// moment(), which turns typed dates (dayjs objects) into NaN, and
		// its defaults find nothing (dashDateRange): in this build it
		// finds no DLQ message on any broker. The Message ID tab puts the
		// whole answer (messageView and tracks) in its one row, whose cells
		// stay empty ("-") on any broker; the message itself is shown by
		// "DLQ topic" below.
		{name: "DLQ", route: "/dlqMessage",
			fill: func(s *dashSide) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					dashClickTab("Message ID"),
					dashChoose(dashPane, dashCG),
					chromedp.SendKeys(chromedp.CSS(dashPane+` input:not(.ant-select-selection-search-input)`), s.msgIDs[dashCount-1]),
					chromedp.Click(chromedp.CSS(dashPane + ` button:has(.anticon-search)`)),
				}
			},
			ready: func(s *dashSide) []string { return []string{"Tag=-"} }},
		{name: "DLQ topic", route: "/message",
			fill: func(s *dashSide) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					dashChoose(dashPane, "%DLQ%"+dashCG),
					dashDateRange(),
					chromedp.Click(chromedp.CSS(dashPane + ` button:has(.anticon-search)`)),
				}
			},
			ready: func(s *dashSide) []string { return s.msgIDs[dashCount-1:] }},
		{name: "message trace", route: "/messageTrace",
			fill: func(s *dashSide) []chromedp.Action[chromedp.Void] {
				return []chromedp.Action[chromedp.Void]{
					dashClickTab("Message ID"),
					dashChoose(dashPane, dashTopic),
					chromedp.SendKeys(chromedp.CSS(dashPane+` input:not(.ant-select-selection-search-input)`), s.msgIDs[0]),
					chromedp.Click(chromedp.CSS(dashPane + ` button:has(.anticon-search)`)),
					chromedp.WaitVisible(chromedp.CSS(dashPane + ` .ant-table-row button`)),
					chromedp.Click(chromedp.CSS(dashPane + ` .ant-table-row button`)),
				}
			},
			// The graph is a canvas: its producer group is not in the DOM.
			ready: func(s *dashSide) []string { return []string{"Message Trace Detail", dashCG} }},
		{name: "ops", route: "/ops", ready: func(s *dashSide) []string { return []string{s.tg.nsAddr} }},
		{name: "proxy", route: "/proxy"},
		{name: "dashboard", route: "/"},
	}
}

// dashReadJS returns the values a page shows: each table row as
// "row: column=cell | ..." (the columns named by the header), then every
// other visible text, in document order. Open dialogs and notifications
// are read too: they hang off the body, not the page's content.
const dashReadJS = `(() => {
  const out = [];
  const vis = el => !el || !el.checkVisibility || el.checkVisibility({checkOpacity: true, checkVisibilityCSS: true});
  const txt = el => el.innerText.trim().replace(/\s+/g, ' ');
  const roots = [document.querySelector('.ant-layout-content') || document.body];
  document.querySelectorAll('.ant-modal-wrap, .ant-drawer, .ant-notification, .ant-message').forEach(e => { if (vis(e)) roots.push(e); });
  for (const root of roots) {
    for (const t of root.querySelectorAll('.ant-table')) {
      if (!vis(t)) continue;
      const heads = [...t.querySelectorAll('.ant-table-thead th')].map(txt);
      for (const tr of t.querySelectorAll('.ant-table-tbody > tr')) {
        if (!vis(tr) || tr.classList.contains('ant-table-measure-row')) continue;
        out.push('row: ' + [...tr.children].map((td, i) => (heads[i] || '#' + i) + '=' + txt(td)).join(' | '));
      }
    }
    const w = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
    for (let n = w.nextNode(); n; n = w.nextNode()) {
      const v = n.nodeValue.trim().replace(/\s+/g, ' ');
      const p = n.parentElement;
      if (!v || !p || p.closest('.ant-table, script, style') || !vis(p)) continue;
      out.push('text: ' + v);
    }
  }
  return out;
})()`

// dashVolatileColumn names the columns whose cells two brokers (or two
// runs) cannot share: rates over the last seconds (TPS), times, and the
// broker's version (rocketgo's reportedVersion, Apache's own). Counts, offsets and
// lags are the scenario's and stay compared.
var dashVolatileColumn = regexp.MustCompile(`(?i)\b(tps|time|storetime|version)\b`)

// dashDayColumn names the columns of counts since midnight: equal on both
// sides unless a side's page was read on another day than its scenario ran.
var dashDayColumn = regexp.MustCompile(`(?i)\b(today|yesterday)\b`)

// maskPageLine masks one line read from a page.
func (s *dashSide) maskPageLine(l string) string {
	crossed := time.Now().Format(time.DateOnly) != s.day
	row, ok := strings.CutPrefix(l, "row: ")
	if !ok {
		return s.mask("", l)
	}
	cells := strings.Split(row, " | ")
	for i, c := range cells {
		head, val, _ := strings.Cut(c, "=")
		if head != "" && (dashVolatileColumn.MatchString(head) || crossed && dashDayColumn.MatchString(head)) {
			cells[i] = head + "=<" + head + ">"
			continue
		}
		cells[i] = head + "=" + s.mask("", val)
	}
	return "row: " + strings.Join(cells, " | ")
}

// requireChromium returns Debian's chromium, or skips.
func requireChromium(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("chromium")
	if err != nil {
		t.Skipf("DASHBOARD PAGES NOT CHECKED: no chromium (%v); compat-tests/dashboard/run.sh chromium installs it", err)
	}
	return p
}

// newBrowser starts a headless Chromium with a fresh profile; it is closed
// at cleanup. The flags keep it off the network it cannot reach here
// (background, component and sync requests) and out of the sandbox root
// cannot use.
func newBrowser(t *testing.T, bin string) context.Context {
	t.Helper()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(bin),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.Flag("headless", true),
		chromedp.Flag("no-sandbox", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("no-first-run", true),
		chromedp.Flag("no-default-browser-check", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("hide-scrollbars", true),
		chromedp.Flag("mute-audio", true),
		chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(actx)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// dashView is what one page showed on one side.
type dashView struct {
	lines []string // masked, sorted
	shot  []byte   // PNG
	err   string   // why the page did not render ("" when it did)
}

// openPage opens one page in a new tab, fills its form, waits for its data
// (or, without ready texts, for its text to stay the same for a second),
// and reads it.
func openPage(bctx context.Context, d *dashboard, s *dashSide, p dashPage) dashView {
	ctx, cancel := chromedp.NewContext(bctx)
	defer cancel()
	ctx, cancelT := context.WithTimeout(ctx, 60*time.Second)
	defer cancelT()
	var v dashView
	acts := []chromedp.Action[chromedp.Void]{
		chromedp.Navigate(d.base + "/#" + p.route),
		chromedp.WaitVisible(chromedp.CSS(`.ant-layout-content`)),
		dashSettle(),
	}
	if p.fill != nil {
		acts = append(acts, p.fill(s)...)
	}
	if err := chromedp.Do(ctx, acts...); err != nil {
		v.err = fmt.Sprintf("open and fill: %v", err)
	}
	var want []string
	if p.ready != nil {
		want = p.ready(s)
	}
	var raw []string
	last, stable := "", time.Now()
	deadline := time.Now().Add(30 * time.Second)
	for v.err == "" {
		var err error
		if raw, err = chromedp.Run(ctx, chromedp.Evaluate[[]string](dashReadJS)); err != nil {
			v.err = fmt.Sprintf("read: %v", err)
			break
		}
		body := strings.Join(raw, "\n")
		missing := ""
		for _, w := range want {
			if !strings.Contains(body, w) {
				missing = w
				break
			}
		}
		if body != last {
			last, stable = body, time.Now()
		}
		// Rendered: every ready text is there and nothing has moved for
		// a second (the rows after the first, the animations).
		if missing == "" && time.Since(stable) > time.Second {
			break
		}
		if time.Now().After(deadline) {
			v.err = fmt.Sprintf("no %q on the page after 30 s", missing)
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	v.shot, _ = chromedp.Run(ctx, chromedp.FullScreenshot(100)) // a failed page is still shown as it is
	for _, l := range raw {
		v.lines = append(v.lines, s.maskPageLine(l))
	}
	sort.Strings(v.lines)
	return v
}

// sideBySide puts two PNG screenshots next to each other (rocketgo left).
func sideBySide(a, b []byte) ([]byte, error) {
	ia, err := png.Decode(bytes.NewReader(a))
	if err != nil {
		return nil, err
	}
	ib, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	const gap = 8
	w := ia.Bounds().Dx() + gap + ib.Bounds().Dx()
	h := max(ia.Bounds().Dy(), ib.Bounds().Dy())
	out := image.NewRGBA(image.Rect(0, 0, w, h))
	draw.Draw(out, out.Bounds(), image.Black, image.Point{}, draw.Src)
	draw.Draw(out, ia.Bounds(), ia, ia.Bounds().Min, draw.Src)
	draw.Draw(out, ib.Bounds().Add(image.Pt(ia.Bounds().Dx()+gap, 0)), ib, ib.Bounds().Min, draw.Src)
	var buf bytes.Buffer
	err = png.Encode(&buf, out)
	return buf.Bytes(), err
}

// dashResultsDir is where screenshots and values go: the named dir when
// asked to keep them, else a temp dir removed after the test.
func dashResultsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("ROCKETGO_DASHBOARD_RESULTS")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func dashFileName(page string) string { return strings.ReplaceAll(page, " ", "_") }

// browsePages opens every page against one side's dashboard and keeps
// what each showed (its screenshot and values also go to results).
func browsePages(t *testing.T, bctx context.Context, d *dashboard, s *dashSide, results string, views map[string]map[string]dashView) {
	t.Helper()
	start := time.Now()
	for _, p := range dashPages() {
		v := openPage(bctx, d, s, p)
		if views[p.name] == nil {
			views[p.name] = map[string]dashView{}
		}
		views[p.name][s.tg.name] = v
		base := filepath.Join(results, s.tg.name+"-"+dashFileName(p.name))
		_ = os.WriteFile(base+".png", v.shot, 0o644)
		_ = os.WriteFile(base+".txt", []byte(strings.Join(v.lines, "\n")+"\n"), 0o644)
		if v.err != "" {
			t.Logf("page %s on %s: %s", p.name, s.tg.name, v.err)
		}
	}
	t.Logf("%s: %d pages in %.1fs", s.tg.name, len(dashPages()), time.Since(start).Seconds())
}

// comparePages compares what each page showed on the two sides, one
// subtest a page, and writes both screenshots side by side to results.
func comparePages(t *testing.T, views map[string]map[string]dashView, results string) {
	for _, p := range dashPages() {
		t.Run("page "+p.name, func(t *testing.T) {
			ours, theirs := views[p.name]["rocketgo"], views[p.name]["apache"]
			if ours.err != "" {
				t.Errorf("rocketgo: %s", ours.err)
			}
			if theirs.err != "" {
				t.Errorf("apache: %s", theirs.err)
			}
			if both, err := sideBySide(ours.shot, theirs.shot); err == nil {
				_ = os.WriteFile(filepath.Join(results, "both-"+dashFileName(p.name)+".png"), both, 0o644)
			}
			compareLines(t, p.name, ours.lines, theirs.lines, dashboardPageDiffs)
		})
	}
	t.Logf("screenshots and values in %s", results)
}
