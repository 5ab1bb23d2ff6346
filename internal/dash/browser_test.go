package dash_test

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/grit-run/grit/internal/machine"
	"github.com/grit-run/grit/internal/sched"
	"github.com/grit-run/grit/schedule"
	"github.com/grit-run/grit/store/sqlite"
	"github.com/grit-run/grit/task"
)

const (
	opToken   = "operator-token-0123456789abcdef"
	readToken = "reader-token-0123456789abcdef"
)

// chromium finds Debian's chromium (scripts/test installs it): under
// CI=true a missing browser fails the test, elsewhere it skips loudly.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("GRIT_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed: the dashboard's browser tests need it (apt-get install chromium; scripts/test installs it)")
	}
	t.Skip("SKIPPING the dashboard's browser tests: chromium is not installed (apt-get install chromium)")
	return ""
}

// gritBin builds the grit command once per test.
func gritBin(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "grit")
	build := exec.Command("go", "build", "-o", bin, "./cmd/grit")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// startProc starts a grit command that runs until the test ends, and
// returns its stdout's lines.
func startProc(t *testing.T, bin string, env []string, args ...string) <-chan string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = &testLog{t: t, prefix: args[0] + ": "}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
	})
	lines := make(chan string, 100)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
		close(lines)
	}()
	return lines
}

type testLog struct {
	t      *testing.T
	prefix string
}

func (l *testLog) Write(b []byte) (int, error) {
	if testing.Verbose() {
		l.t.Logf("%s%s", l.prefix, strings.TrimRight(string(b), "\n"))
	}
	return len(b), nil
}

// dashboardAddr reads grit server's line "dashboard on http://ADDR" and returns its URL.
func dashboardAddr(t *testing.T, lines <-chan string) string {
	t.Helper()
	timeout := time.After(30 * time.Second)
	for {
		select {
		case l, ok := <-lines:
			if !ok {
				t.Fatal("grit server ended before it served the dashboard")
			}
			if rest, ok := strings.CutPrefix(l, "dashboard on "); ok {
				return strings.Fields(rest)[0]
			}
		case <-timeout:
			t.Fatal("grit server did not say where the dashboard is within 30s")
		}
	}
}

func run(t *testing.T, bin string, env []string, args ...string) string {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("grit %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return string(out)
}

// screenshots is where the tests leave their screenshots: GRIT_SCREENSHOTS
// if set, else a temporary directory.
func screenshots(t *testing.T) string {
	if d := os.Getenv("GRIT_SCREENSHOTS"); d != "" {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
		return d
	}
	return t.TempDir()
}

// TestDashboardInABrowser drives a real headless Chromium against a real
// grit server and a real grit worker on one SQLite store: an operator
// logs in, sees a dead letter appear without reloading, replays its
// fingerprint group and finds the audit entry; a read-only visitor sees
// no buttons and is refused when posting anyway; a POST without its CSRF
// token is refused.
func TestDashboardInABrowser(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	bin := gritBin(t)
	dir := t.TempDir()
	storeDSN := "sqlite:" + filepath.Join(dir, "grit.db")
	env := []string{"GRIT_STORE=" + storeDSN, "GRIT_TOKENS=" + opToken + "," + readToken + " read-only"}
	run(t, bin, env, "migrate")
	lines := startProc(t, bin, env, "server", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0")
	base := dashboardAddr(t, lines)
	shots := screenshots(t)

	ctx, cancel := chromedp.NewExecAllocator(context.Background(), append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1360, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true), chromedp.Flag("disable-quic", true))...)
	defer cancel()
	ctx, cancel = chromedp.NewContext(ctx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	// Buttons that act on many tasks ask before they do: say yes.
	dialogs := chromedp.Events(ctx, page.JavascriptDialogOpening)
	go func() {
		for _, err := range dialogs {
			if err != nil {
				return
			}
			chromedp.Call(ctx, page.HandleJavaScriptDialog, page.HandleJavaScriptDialogParams{Accept: true})
		}
	}()
	shot := func(name string) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			png, err := chromedp.FullScreenshot(100)(ctx, tg)
			if err != nil {
				return chromedp.Void{}, err
			}
			return chromedp.Void{}, os.WriteFile(filepath.Join(shots, name+".png"), png, 0o644)
		}
	}
	// text reads an element's text; a live refresh that replaced the
	// element between finding it and reading it is read again.
	text := func(ctx context.Context, sel string) string {
		t.Helper()
		var v string
		var err error
		for range 5 {
			if v, err = chromedp.Run(ctx, chromedp.Text(chromedp.CSS(sel))); err == nil || !strings.Contains(err.Error(), "No node with given id") {
				break
			}
		}
		must(t, err)
		return v
	}

	// Logged out, a page sends the visitor to the login page.
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/dead-letters"),
		chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)),
		shot("login"),
	))
	if title, err := chromedp.Run(ctx, chromedp.Title()); err != nil || !strings.Contains(title, "Log in") {
		t.Errorf("the login page's title is %q (%v)", title, err)
	}
	must(t, chromedp.Do(ctx,
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), opToken),
		chromedp.Submit(chromedp.CSS(`input[name=token]`)),
		chromedp.WaitVisible(`//h2[contains(., "Dead letters by fingerprint")]`),
		chromedp.WaitVisible(chromedp.CSS(`#live.on`)),
	))
	if empty := text(ctx, "main"); !strings.Contains(empty, "No dead letters") {
		t.Fatalf("the dead letters page before any failure says %q", empty)
	}

	// A run whose charge task is poisoned, worked by a real worker: its
	// dead letter appears on the open page, without a reload.
	taskFile := filepath.Join(dir, "nightly.yaml")
	os.WriteFile(taskFile, []byte(`name: nightly
tasks:
  extract:
    run: "echo extracting"
  transform:
    run: "echo transforming"
    needs: [extract]
  charge:
    run: "echo 'KeyError: order 42' >&2; exit 1"
    retry: "5 10ms"
    needs: [extract]
  load:
    run: "echo loading"
    needs: [transform, charge]
  report:
    run: "echo report"
    needs: [load]
`), 0o644)
	run(t, bin, env, "submit", taskFile)
	startProc(t, bin, env, "worker", "--concurrency", "4")
	must(t, chromedp.Do(ctx, chromedp.WaitVisible(chromedp.CSS(`.dlgroup`)), shot("dead-letters")))
	if group := text(ctx, ".dlgroup"); !strings.Contains(group, "KeyError: order 42") ||
		!strings.Contains(group, "exec") {
		t.Errorf("the dead letter group says %q", group)
	}

	// The run's graph shows the dead letter and what waits on it.
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/runs/1"),
		chromedp.WaitVisible(chromedp.CSS(`svg.dag`)),
		chromedp.WaitVisible(chromedp.CSS(`svg.dag .st-dead_letter`)),
		chromedp.WaitVisible(chromedp.CSS(`svg.dag .blocked`)),
		shot("run"),
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`.tiles`)),
		shot("overview"),
	))

	// Replay the fingerprint's group; the audit log says who did it.
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/dead-letters"),
		chromedp.WaitVisible(chromedp.CSS(`.dlgroup form button[value=replay]`)),
		chromedp.Click(chromedp.CSS(`.dlgroup form button[value=replay]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	))
	if flash := text(ctx, ".flash"); !strings.Contains(flash, "1 replayed") {
		t.Errorf("after the replay the page says %q, want 1 replayed", flash)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS(`table.grid`)), shot("audit")))
	if audit := text(ctx, "table.grid tbody"); !regexp.MustCompile(`token [0-9a-f]{6}\s+replay\s+dead letters with fingerprint \S+\s+1`).MatchString(audit) {
		t.Errorf("the audit log does not show the replay: %q", audit)
	}
	// Rows a handler set aside, beside the dead letters: the operator
	// replays one group, and the audit log says so.
	declareQuarantined(t, storeDSN)
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/dead-letters"),
		chromedp.WaitVisible(chromedp.CSS(`.qgroup table.qitems`)),
		shot("quarantined"),
	))
	if q := text(ctx, "#quarantined"); !strings.Contains(q, "row 3: bad date") || !strings.Contains(q, `{"note":"<b>no</b> account"}`) ||
		!strings.Contains(q, "set aside by import") || !strings.Contains(q, "All 4 items") {
		t.Errorf("the quarantined section says %q", q)
	}
	must(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`.qgroup form button[value=replay]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	))
	if flash := text(ctx, ".flash"); !regexp.MustCompile(`quarantined items with fingerprint \S+: 4 replayed as task \d+`).MatchString(flash) {
		t.Errorf("after the replay of the quarantined group the page says %q", flash)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS(`table.grid`))))
	if audit := text(ctx, "table.grid tbody"); !regexp.MustCompile(`replay\s+quarantined items with fingerprint \S+\s+4`).MatchString(audit) {
		t.Errorf("the audit log does not show the quarantined replay: %q", audit)
	}
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/tasks?state=DEAD_LETTER&state=RETRYING&state=READY&state=RUNNING"),
		chromedp.WaitVisible(chromedp.CSS(`table.grid`)),
		shot("tasks"),
		chromedp.Navigate(base+"/tasks/3"),
		chromedp.WaitVisible(chromedp.CSS(`svg.timeline`)),
		shot("task"),
		chromedp.Navigate(base+"/groups"),
		chromedp.WaitVisible(chromedp.CSS(`table.grid`)),
		chromedp.Navigate(base+"/workers"),
		chromedp.WaitVisible(`//td[contains(., "alive")]`),
		shot("workers"),
	))

	// Limits: one set with grit limits set, one set on the page; both
	// listed with what they hold back, and the page's in the audit log.
	run(t, bin, env, "limits", "set", "group", "payments-api", "4", "--rate", "50/s")
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/limits"),
		chromedp.WaitVisible(chromedp.CSS(`[id="l-group-payments-api"]`)),
		chromedp.SendKeys(chromedp.CSS(`form.filters input[name=name]`), "acme"),
		chromedp.SendKeys(chromedp.CSS(`form.filters input[name=rate]`), "5/s"),
		chromedp.SendKeys(chromedp.CSS(`form.filters input[name=burst]`), "10"),
		chromedp.SendKeys(chromedp.CSS(`form.filters input[name=weight]`), "2"),
		chromedp.Click(chromedp.CSS(`form.filters button.primary`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
		chromedp.WaitVisible(chromedp.CSS(`[id="l-tenant-acme"]`)),
		shot("limits"),
	))
	if flash := text(ctx, ".flash"); !strings.Contains(flash, "tenant acme: at most 5/s (burst 10); tenant acme: weight 2") {
		t.Errorf("after setting a rate the page says %q", flash)
	}
	if row := text(ctx, `[id="l-group-payments-api"]`); !regexp.MustCompile(`group\s+payments-api\s+0\s+4\s+50/s\s+0`).MatchString(row) {
		t.Errorf("the group's row says %q", row)
	}
	if row := text(ctx, `[id="l-tenant-acme"]`); !regexp.MustCompile(`5/s burst 10\s+0\s+2`).MatchString(row) {
		t.Errorf("the tenant's row says %q", row)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS(`table.grid`))))
	if audit := text(ctx, "table.grid tbody"); !regexp.MustCompile(`limit\s+tenant acme\s+0\s+tenant acme: at most 5/s`).MatchString(audit) {
		t.Errorf("the audit log does not show the rate set: %q", audit)
	}

	// Schedules, declared in the store the server and the worker share,
	// and ticked by the worker: heartbeat's slots succeed; flaky's fail,
	// and it pauses itself after two; the operator pauses nightly/report
	// with a reason and triggers it anyway.
	declareSchedules(t, storeDSN)
	nightly := `[id="s-nightly/report"]`
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/schedules"),
		chromedp.WaitVisible(chromedp.CSS(`#s-heartbeat .st-success`)),
		chromedp.WaitVisible(chromedp.CSS(`#s-flaky .pausenote`)),
		chromedp.SendKeys(chromedp.CSS(nightly+` input[name=reason]`), "the warehouse is migrating"),
		chromedp.Click(chromedp.CSS(nightly+` button[value=pause]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	))
	if flash := text(ctx, ".flash"); !strings.Contains(flash, "schedule nightly/report: paused") {
		t.Errorf("after the pause the page says %q", flash)
	}
	must(t, chromedp.Do(ctx,
		chromedp.WaitVisible(chromedp.CSS(nightly+` .pausenote`)),
		chromedp.Click(chromedp.CSS(nightly+` button[value=trigger]`)),
		chromedp.WaitVisible(`//div[contains(@class, "flash") and contains(., "triggered task")]`),
		chromedp.WaitVisible(chromedp.CSS(nightly+` .tag`)),
		chromedp.Navigate(base+"/schedules"), // at the top: the redirect went to the card
		chromedp.WaitVisible(chromedp.CSS(`#s-heartbeat .st-success`)),
		chromedp.WaitVisible(chromedp.CSS(`#s-flaky .pausenote`)),
		shot("schedules"),
	))
	if note := text(ctx, nightly+" .pausenote"); !strings.Contains(note, "Paused by token") || !strings.Contains(note, "the warehouse is migrating") {
		t.Errorf("nightly/report's pause says %q", note)
	}
	if note := text(ctx, "#s-flaky .pausenote"); !strings.Contains(note, "Paused itself after 2 failed slots in a row") {
		t.Errorf("flaky's pause says %q", note)
	}
	must(t, chromedp.Do(ctx, chromedp.Navigate(base+"/audit"), chromedp.WaitVisible(chromedp.CSS(`table.grid`))))
	if audit := text(ctx, "table.grid tbody"); !regexp.MustCompile(`trigger\s+schedule nightly/report\s+0\s+task \d+`).MatchString(audit) ||
		!regexp.MustCompile(`pause\s+schedule nightly/report\s+0\s+the warehouse is migrating`).MatchString(audit) {
		t.Errorf("the audit log does not show the pause and the trigger: %q", audit)
	}

	// State machines' instances, made in the shared store by a process
	// that has the machines (the worker does not: their tasks wait): the
	// operator lists them, opens one whose key has a slash and sends it
	// an event with a payload; one is held by its dead-lettered task.
	declareInstances(t, storeDSN)
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/machines"),
		chromedp.WaitVisible(chromedp.CSS(`table.machines`)),
		shot("machines"),
		clickLive(`//a[code[.="eu/2024:17"]]`),
		chromedp.WaitVisible(chromedp.CSS(`.mstate`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=event]`), "refund"),
		chromedp.SendKeys(chromedp.CSS(`input[name=payload]`), `{"amount": 42, "note": "<late>"}`),
		chromedp.Click(chromedp.CSS(`form[method=post] button.primary`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
		shot("machine"),
	))
	if flash := text(ctx, ".flash"); !strings.Contains(flash, "event refund sent to order/eu/2024:17 (seq 4)") {
		t.Errorf("after the send the page says %q", flash)
	}
	if h := text(ctx, "table.history tbody"); !regexp.MustCompile(`(?s)2\s+cancel.*IGNORED.*1\s+pay\s+new → paid\s+ENTERED`).MatchString(h) {
		t.Errorf("the instance's history says %q", h)
	}
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/machines/refund/r-held"),
		chromedp.WaitVisible(chromedp.CSS(`.badge.st-dead_letter`)),
		shot("machine-held"),
		chromedp.Navigate(base+"/audit"),
		chromedp.WaitVisible(chromedp.CSS(`table.grid`)),
	))
	if audit := text(ctx, "table.grid tbody"); !regexp.MustCompile(`send\s+instance order/eu/2024:17\s+0\s+event refund \(seq 4\)`).MatchString(audit) {
		t.Errorf("the audit log does not show the send: %q", audit)
	}

	// A read-only visitor sees the same pages without their buttons.
	rctx, rcancel := chromedp.NewContext(ctx) // a tab of its own, with the same cookies: log out first
	defer rcancel()
	must(t, chromedp.Do(rctx,
		chromedp.Navigate(base+"/"),
		chromedp.WaitVisible(chromedp.CSS(`form[action="/logout"] button`)),
		chromedp.Click(chromedp.CSS(`form[action="/logout"] button`)),
		chromedp.WaitVisible(chromedp.CSS(`input[name=token]`)),
		chromedp.SendKeys(chromedp.CSS(`input[name=token]`), readToken),
		chromedp.Submit(chromedp.CSS(`input[name=token]`)),
		chromedp.WaitVisible(chromedp.CSS(`.role-read-only`)),
		chromedp.Navigate(base+"/dead-letters"),
		chromedp.WaitVisible(`//h2[contains(., "Dead letters by fingerprint")]`),
		shot("read-only"),
	))
	if buttons, err := chromedp.Run(rctx, chromedp.Evaluate[int](`document.querySelectorAll("main form button").length`)); err != nil || buttons != 0 {
		t.Errorf("a read-only visitor sees %d buttons on the dead letters page (%v)", buttons, err)
	}
	must(t, chromedp.Do(rctx, chromedp.Navigate(base+"/schedules"), chromedp.WaitVisible(chromedp.CSS(`#s-heartbeat`))))
	if buttons, err := chromedp.Run(rctx, chromedp.Evaluate[int](`document.querySelectorAll("main form button").length`)); err != nil || buttons != 0 {
		t.Errorf("a read-only visitor sees %d buttons on the schedules page (%v)", buttons, err)
	}

	must(t, chromedp.Do(rctx, chromedp.Navigate(base+"/machines/order/eu%2F2024:17"), chromedp.WaitVisible(chromedp.CSS(`.mstate`))))
	if buttons, err := chromedp.Run(rctx, chromedp.Evaluate[int](`document.querySelectorAll("main form button").length`)); err != nil || buttons != 0 {
		t.Errorf("a read-only visitor sees %d buttons on an instance's page (%v)", buttons, err)
	}

	// Posting anyway: a read-only session is refused, as is an operator's
	// POST without its CSRF token.
	for _, c := range []struct {
		token, csrf string
		want        string
	}{
		{readToken, "page", "read-only"},
		{opToken, "", "CSRF"},
		{opToken, "forged", "CSRF"},
	} {
		client := loggedIn(t, base, c.token)
		csrf := c.csrf
		if csrf == "page" {
			csrf = csrfOf(t, client, base)
		}
		resp, err := client.PostForm(base+"/dead-letters/act", url.Values{"action": {"fail"}, "fingerprint": {""}, "csrf": {csrf}})
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusForbidden || !strings.Contains(string(body), c.want) {
			t.Errorf("a POST as %s with csrf %q: %d %q, want 403 saying %s", c.token[:6], c.csrf, resp.StatusCode, body, c.want)
		}
	}
}

// declareSchedules puts the browser test's schedules in the store at dsn.
func declareSchedules(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	now, err := st.Now(ctx)
	if err != nil {
		t.Fatal(err)
	}
	argsOf := func(shell string) json.RawMessage {
		b, _ := json.Marshal(task.Exec{Shell: shell, PermanentOnExit: []int{3}})
		return b
	}
	if err := sched.Declare(ctx, st, now,
		schedule.Schedule{Name: "heartbeat", Every: 2 * time.Second, Task: schedule.Task{Kind: task.KindExec, Args: argsOf("echo ok")}},
		schedule.Schedule{Name: "flaky", Every: 2 * time.Second, PauseAfter: 2,
			Task: schedule.Task{Kind: task.KindExec, Args: argsOf("echo 'upstream said 503' >&2; exit 3")}},
		schedule.Schedule{Name: "nightly/report", Cron: "0 2 * * *", Zone: "Europe/Paris", Jitter: 30 * time.Second, PauseAfter: 3,
			Overlap: schedule.BufferOne, Task: schedule.Task{Kind: task.KindExec, Queue: "reports", Args: argsOf("echo report")}},
	); err != nil {
		t.Fatal(err)
	}
}

// declareInstances makes the browser test's instances in the store at
// dsn: order eu/2024:17 paid, an ignored cancel, entering shipped;
// refund r-held, whose refunding task is a dead letter.
func declareInstances(t *testing.T, dsn string) {
	t.Helper()
	ctx := context.Background()
	st, err := sqlite.Open(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	send(t, st, orderMachine, orderKey, "pay", "cancel", "ship")
	send(t, st, orderMachine, "eu/2024:18", "cancel")
	send(t, st, refundMachine, "r-held", "start")
	endAll(t, st, "refund", task.DeadLetter)
	if _, err := machine.Advance(ctx, st, refundMachine, "r-held", time.Now()); err != nil {
		t.Fatal(err)
	}
}

// declareQuarantined has tasks in the store at dsn set rows aside: four
// of an import, which a replay runs as import.row, and one of an export,
// whose handler names no kind.
func declareQuarantined(t *testing.T, dsn string) {
	t.Helper()
	st, err := sqlite.Open(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var rows []string
	for i := range 4 {
		rows = append(rows, fmt.Sprintf(`{"row": %d, "date": "2026-13-%02d"}`, i, i), fmt.Sprintf("row %d: bad date", i))
	}
	setAside(t, st, "import", "import.row", rows...)
	setAside(t, st, "export", "", `{"note":"<b>no</b> account"}`, `customer "c-17": no account`)
}

// clickLive clicks sel on a page whose live refresh may replace it
// between the moment it is found and the click: a node the refresh took
// away is looked for again, up to five times.
func clickLive(sel string) chromedp.Action[chromedp.Void] {
	return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
		var err error
		for range 5 {
			if _, err = chromedp.Click(sel)(ctx, tg); err == nil || !strings.Contains(err.Error(), "Could not find node") {
				return chromedp.Void{}, err
			}
		}
		return chromedp.Void{}, err
	}
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// loggedIn is an HTTP client logged in with token.
func loggedIn(t *testing.T, base, token string) *http.Client {
	t.Helper()
	jar, _ := cookiejar.New(nil)
	c := &http.Client{Jar: jar}
	resp, err := c.PostForm(base+"/login", url.Values{"token": {token}, "next": {"/"}})
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("login with %s…: %d", token[:6], resp.StatusCode)
	}
	return c
}

var csrfField = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrfOf reads the CSRF token a page gives its forms.
func csrfOf(t *testing.T, c *http.Client, base string) string {
	t.Helper()
	resp, err := c.Get(base + "/")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	m := csrfField.FindSubmatch(b)
	if m == nil {
		t.Fatalf("no CSRF token on the overview page:\n%s", b)
	}
	return string(m[1])
}
