package dash

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"strconv"
	"strings"
	"time"

	"github.com/grit-run/grit/task"
)

// view is what every page template gets.
type view struct {
	Title   string
	Nav     string // the nav entry to highlight
	Who     who
	Open    bool // no tokens: everyone is the local operator
	CSRF    string
	Version string
	Now     time.Time
	Flash   string
	// Lag is how far behind the store the read store the pages read is
	// ("" when they read the store).
	Lag  string
	Data any
}

// pageNames are the page templates; each is parsed with layout.html.
var pageNames = []string{"overview", "runs", "run", "tasks", "task", "deadletters", "groups", "limits", "workers", "audit", "schedules", "machines", "machine", "error", "login"}

func parsePages() (map[string]*template.Template, error) {
	base, err := template.New("layout.html").Funcs(funcs).ParseFS(templateFS, "templates/layout.html", "templates/parts.html")
	if err != nil {
		return nil, err
	}
	pages := map[string]*template.Template{}
	for _, name := range pageNames {
		t, err := template.Must(base.Clone()).ParseFS(templateFS, "templates/"+name+".html")
		if err != nil {
			return nil, fmt.Errorf("dashboard template %s: %w", name, err)
		}
		pages[name] = t
	}
	return pages, nil
}

// render writes page name. A request with the header X-Partial (the live
// script's) gets the page's main part alone.
func (d *Dashboard) render(w http.ResponseWriter, r *http.Request, v who, name, title string, data any) {
	vw := view{
		Title: title, Nav: navOf(name), Who: v, Open: d.sess.open(), CSRF: d.sess.csrf(v),
		Version: d.cfg.Version, Now: time.Now(), Flash: r.URL.Query().Get("done"), Data: data,
	}
	if d.lag != nil {
		vw.Lag, _, _ = d.lag.get(r.Context())
	}
	tmpl := "layout.html"
	if r.Header.Get("X-Partial") != "" {
		tmpl = "partial"
	}
	var b bytes.Buffer
	if err := d.pages[name].ExecuteTemplate(&b, tmpl, vw); err != nil {
		d.cfg.Logger.Error("dashboard template failed", "page", name, "err", err)
		http.Error(w, "the page could not be drawn (a bug): "+err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	b.WriteTo(w)
}

func navOf(page string) string {
	switch page {
	case "run":
		return "runs"
	case "task":
		return "tasks"
	case "machine":
		return "machines"
	}
	return page
}

var funcs = template.FuncMap{
	"stateClass": func(s task.State) string { return "st-" + strings.ToLower(string(s)) },
	"ago":        ago,
	"until":      func(t time.Time) string { return humanDur(time.Until(t)) },
	"dur":        func(d time.Duration) string { return humanDur(d) },
	"clock": func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return t.Local().Format("2006-01-02 15:04:05")
	},
	"iso":      func(t time.Time) string { return t.UTC().Format(time.RFC3339) },
	"inZone":   inZone,
	"interval": interval,
	"short":    func(s string) string { return shorten(s, 12) },
	"trunc":    func(n int, s string) string { return shorten(s, n) },
	"firstLine": func(s string) string {
		s, _, _ = strings.Cut(s, "\n")
		return s
	},
	"prettyJSON": func(b []byte) string {
		if len(b) == 0 {
			return ""
		}
		var out bytes.Buffer
		if json.Indent(&out, b, "", "  ") != nil {
			return string(b)
		}
		// Go's encoder writes <, > and & as \u003c, \u003e and \u0026;
		// the page escapes what it shows anyway, so show the characters.
		return jsonHTMLEscapes.Replace(out.String())
	},
	// payload is JSON on one line, as the store keeps it, cut to n
	// characters, with the characters Go's encoder escapes shown.
	"payload": func(n int, b []byte) string { return shorten(jsonHTMLEscapes.Replace(string(b)), n) },
	"pct": func(a, b int) string {
		if b == 0 {
			return "-"
		}
		return fmt.Sprintf("%.0f%%", 100*float64(a)/float64(b))
	},
	"add":   func(a, b int) int { return a + b },
	"num":   numAny,
	"count": count,
	"rows":  func(ts []task.Task, sel bool) taskRows { return taskRows{Tasks: ts, Select: sel} },
	"query": func(base string, kv ...string) template.URL { return template.URL(withQuery(base, kv...)) },
	"seq": func(n int) []int {
		out := make([]int, n)
		for i := range out {
			out[i] = i
		}
		return out
	},
}

var jsonHTMLEscapes = strings.NewReplacer(`\u003c`, "<", `\u003e`, ">", `\u0026`, "&")

// withQuery is base (a path with a query) with keys set to values; an
// empty value removes its key.
func withQuery(base string, kv ...string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	q := u.Query()
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] == "" {
			q.Del(kv[i])
		} else {
			q.Set(kv[i], kv[i+1])
		}
	}
	u.RawQuery = q.Encode()
	return path.Clean(u.Path) + strings.TrimSuffix("?"+u.RawQuery, "?")
}

// inZone is t as a clock in zone reads it, with the zone's abbreviation:
// "Thu 26 Nov 02:00 CET".
func inZone(t time.Time, zone string) string {
	loc, err := time.LoadLocation(zone)
	if err != nil {
		loc = time.UTC
	}
	layout := "Mon 2 Jan 15:04 MST"
	if t.Second() != 0 {
		layout = "Mon 2 Jan 15:04:05 MST"
	}
	return t.In(loc).Format(layout)
}

// interval is a duration as a schedule is written: 30s, 5m, 1h30m.
func interval(d time.Duration) string {
	s := d.String()
	s = strings.TrimSuffix(s, "m0s")
	if s != d.String() {
		s += "m"
	}
	if t := strings.TrimSuffix(s, "h0m"); t != s {
		s = t + "h"
	}
	return s
}

// thousands is a count as an operator reads it: 880,000, not 880000.
// Every count a page shows goes through it.
func thousands(n int) string {
	s := strconv.Itoa(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

// numAny is thousands for the integers templates hold.
func numAny(v any) string {
	switch n := v.(type) {
	case int:
		return thousands(n)
	case int64:
		return thousands(int(n))
	}
	return fmt.Sprint(v)
}

// count is n things, with thousands separators: "1 task", "1,200 tasks".
func count(n int, thing string) string {
	if n == 1 {
		return "1 " + thing
	}
	return thousands(n) + " " + thing + "s"
}

// taskRows is a list of tasks as the taskrows template draws it; Select
// gives each row a box to tick, for the operators' actions on many.
type taskRows struct {
	Tasks  []task.Task
	Select bool
}

func urlEscape(s string) string { return url.QueryEscape(s) }

func shorten(s string, n int) string {
	if len([]rune(s)) <= n {
		return s
	}
	return string([]rune(s)[:n]) + "…"
}

func ago(t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := time.Since(t)
	if d < 0 {
		return "in " + humanDur(-d)
	}
	return humanDur(d) + " ago"
}

// humanDur is a duration as an operator reads it: 340ms, 4.2s, 3m12s,
// 5h03m, 2d04h.
func humanDur(d time.Duration) string {
	if d < 0 {
		d = -d
	}
	switch {
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < 10*time.Second:
		return fmt.Sprintf("%.1fs", d.Seconds())
	case d < time.Minute:
		return fmt.Sprintf("%ds", int(d.Seconds()))
	case d < time.Hour:
		return fmt.Sprintf("%dm%02ds", int(d.Minutes()), int(d.Seconds())%60)
	case d < 48*time.Hour:
		return fmt.Sprintf("%dh%02dm", int(d.Hours()), int(d.Minutes())%60)
	}
	return fmt.Sprintf("%dd%02dh", int(d.Hours())/24, int(d.Hours())%24)
}
