package dash_test

import (
	"context"
	"fmt"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/cdproto/page"
	"github.com/chromedp/chromedp"

	"github.com/grit-run/grit/internal/dash"
	"github.com/grit-run/grit/task"
)

// TestLayoutThemesAndSelectionInABrowser drives headless Chromium on a
// dashboard of its own (no tokens: the local operator): every page, at
// 1440px and at 390px wide, in the light theme and the dark one, shows
// every nav item and no page wider than the screen (tables scroll in
// their cards); the toggle switches the theme and keeps it over a
// reload; and an operator ticks tasks, is asked with their count, and
// deletes them.
func TestLayoutThemesAndSelectionInABrowser(t *testing.T) {
	t.Parallel()
	browser := chromium(t)
	st := openStore(t)
	bg := context.Background()
	var nts []task.NewTask
	for i := range 60 {
		nts = append(nts, task.NewTask{Kind: "sync", Args: []byte(fmt.Sprintf(`{"order":%d}`, 880000+i))})
	}
	if _, err := st.Enqueue(bg, append(nts, task.NewTask{Kind: "charge"}, task.NewTask{Kind: "charge"})); err != nil {
		t.Fatal(err)
	}
	for range 60 {
		endTask(t, st, "sync", task.Failed)
	}
	endTask(t, st, "charge", task.DeadLetter)
	endTask(t, st, "charge", task.DeadLetter)
	if _, err := st.SubmitRun(bg, task.NewRun{Name: "nightly", Tasks: []task.NewTask{
		{Name: "extract", Kind: "exec"}, {Name: "load", Kind: "exec", Needs: []string{"extract"}},
	}}); err != nil {
		t.Fatal(err)
	}
	d, err := dash.New(dash.Config{Store: st})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(d)
	t.Cleanup(func() { d.Close(); srv.Close() })
	base, shots := srv.URL, screenshots(t)

	ctx, cancel := chromedp.NewExecAllocator(bg, append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(browser), chromedp.NoSandbox, chromedp.DisableGPU, chromedp.WindowSize(1440, 900),
		chromedp.Flag("disable-background-networking", true), chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true))...)
	defer cancel()
	ctx, cancel = chromedp.NewContext(ctx)
	defer cancel()
	ctx, cancel = context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	asked := make(chan string, 4)
	must(t, chromedp.Do(ctx, chromedp.Navigate("about:blank")))
	go func() {
		for ev, err := range chromedp.Events(ctx, page.JavascriptDialogOpening) {
			if err != nil {
				return
			}
			asked <- ev.Message
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
	eval := func(js string) string {
		t.Helper()
		v, err := chromedp.Run(ctx, chromedp.Evaluate[string](js))
		must(t, err)
		return v
	}
	scheme := func(dark bool) chromedp.Action[chromedp.Void] {
		return func(ctx context.Context, _ *chromedp.Target) (chromedp.Void, error) {
			v := "light"
			if dark {
				v = "dark"
			}
			_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
				Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: v}}})
			return chromedp.Void{}, err
		}
	}

	pages := map[string]string{
		"overview": "/", "tasks": "/tasks?state=FAILED&state=DEAD_LETTER", "dead-letters": "/dead-letters",
		"run": "/runs/1", "runs": "/runs", "task": "/tasks/1", "groups": "/groups", "audit": "/audit",
		"schedules": "/schedules", "workers": "/workers", "limits": "/limits", "machines": "/machines",
	}
	for _, width := range []int64{1440, 390} {
		for _, dark := range []bool{false, true} {
			must(t, chromedp.Do(ctx, chromedp.EmulateViewport(width, 900), scheme(dark)))
			for name, path := range pages {
				must(t, chromedp.Do(ctx, chromedp.Navigate(base+path), chromedp.WaitVisible(chromedp.CSS(`main .card`))))
				theme := map[bool]string{false: "light", true: "dark"}[dark]
				where := fmt.Sprintf("%s at %dpx, %s", path, width, theme)
				// The page is no wider than the screen: what is wider
				// scrolls inside its card.
				if over := eval(`String(document.documentElement.scrollWidth - window.innerWidth)`); over != "0" {
					t.Errorf("%s: the page is %spx wider than the screen", where, over)
				}
				// Every nav item is on the screen, none hidden.
				if hidden := eval(`[...document.querySelectorAll("header nav a")].filter(a => {
					const r = a.getBoundingClientRect();
					return r.width === 0 || r.left < 0 || r.right > window.innerWidth;
				}).map(a => a.textContent).join(", ")`); hidden != "" {
					t.Errorf("%s: nav items off the screen: %s", where, hidden)
				}
				// The page's background is that of the theme.
				lum := eval(`(() => { const m = getComputedStyle(document.body).backgroundColor.match(/\d+/g).map(Number);
					return String(Math.round((m[0] + m[1] + m[2]) / 3)); })()`)
				if n, err := strconv.Atoi(lum); err != nil || (n < 128) != dark {
					t.Errorf("%s: the page's background is %s of 255 bright (%v), want the %s theme's", where, lum, err, theme)
				}
				if name == "tasks" || name == "overview" || name == "run" || name == "task" || name == "dead-letters" {
					must(t, chromedp.Do(ctx, shot(fmt.Sprintf("%s-%d-%s", name, width, theme))))
				}
			}
		}
	}

	// The toggle: on a light page it switches to dark, which a reload
	// keeps (localStorage), and back.
	must(t, chromedp.Do(ctx, chromedp.EmulateViewport(1440, 900), scheme(false),
		chromedp.Navigate(base+"/"), chromedp.WaitVisible(chromedp.CSS(`#theme`)), chromedp.Click(chromedp.CSS(`#theme`))))
	if got := eval(`document.documentElement.getAttribute("data-theme") + " " + localStorage.getItem("grit-theme")`); got != "dark dark" {
		t.Errorf("after the toggle on a light page: theme and its record %q, want dark dark", got)
	}
	must(t, chromedp.Do(ctx, chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS(`main .card`))))
	if got := eval(`document.documentElement.getAttribute("data-theme") + " " + getComputedStyle(document.body).backgroundColor`); !strings.HasPrefix(got, "dark rgb(15, 18, 22)") {
		t.Errorf("after a reload the theme is %q, want the dark one kept", got)
	}
	must(t, chromedp.Do(ctx, chromedp.Click(chromedp.CSS(`#theme`))))
	if got := eval(`document.documentElement.getAttribute("data-theme") + " " + localStorage.getItem("grit-theme")`); got != "light null" {
		t.Errorf("after the toggle back: %q, want light, and no record (the browser's own choice)", got)
	}

	// Selection: the box in the head ticks the page; two ticked, the
	// delete asks with their count and deletes them.
	must(t, chromedp.Do(ctx,
		chromedp.Navigate(base+"/tasks?state=FAILED"),
		chromedp.WaitVisible(chromedp.CSS(`input.selall`)),
		chromedp.Click(chromedp.CSS(`input.selall`)),
	))
	if n := eval(`document.querySelector("#sel .selcount").textContent`); n != "50" {
		t.Errorf("after ticking the page: %q selected, want 50", n)
	}
	must(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`input.selall`)),
		chromedp.Click(chromedp.CSS(`input[name=id][value="60"]`)),
		chromedp.Click(chromedp.CSS(`input[name=id][value="59"]`)),
		shot("tasks-selected"),
	))
	must(t, chromedp.Do(ctx,
		chromedp.Click(chromedp.CSS(`#sel button[value=delete]`)),
		chromedp.WaitVisible(chromedp.CSS(`.flash`)),
	))
	select {
	case msg := <-asked:
		if !strings.Contains(msg, "Delete 2 tasks for good") {
			t.Errorf("the delete asked %q, want it to say 2 tasks", msg)
		}
	default:
		t.Errorf("the delete did not ask first")
	}
	if flash := eval(`document.querySelector(".flash").textContent`); !strings.Contains(flash, "tasks 60, 59: 2 tasks deleted for good") {
		t.Errorf("after the delete the page says %q", flash)
	}
	if _, err := st.GetTask(bg, 60); err == nil {
		t.Errorf("task 60 is still there after its delete")
	}
}
