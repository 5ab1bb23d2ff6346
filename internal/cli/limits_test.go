package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/grit-run/grit/internal/ops"
	"github.com/grit-run/grit/store"
)

func TestLimitsSetRates(t *testing.T) {
	t.Parallel()
	st := migratedStore(t)
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"tenant", "acme", "--rate", "5/s", "--burst", "10"}, "tenant acme: at most 5/s (burst 10)"},
		{[]string{"kind", "resize", "--rate", "300/m"}, "kind resize: at most 5/s (burst 5)"},
		{[]string{"group", "api", "4", "--rate", "0.5/s"}, "group api: at most 4 running\ngroup api: at most 30/m (burst 1)"},
		{[]string{"queue", "mail", "--rate", "7200/h"}, "queue mail: at most 2/s"},
	} {
		code, out, errOut := grit(t, append(append([]string{"limits", "set"}, c.args...), "--store", st)...)
		if code != 0 || !strings.Contains(out, c.says) {
			t.Fatalf("set %v: exit %d: %q %s; want it to say %q", c.args, code, out, errOut, c.says)
		}
	}
	code, out, _ := grit(t, "limits", "--json", "--store", st)
	var rows []ops.LimitRow
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("list: exit %d, %v: %s", code, err, out)
	}
	got := map[string]ops.LimitRow{}
	for _, r := range rows {
		got[string(r.Scope)+" "+r.Name] = r
	}
	if r := got["tenant acme"]; len(rows) != 4 || r.Rate == nil || r.Rate.Rate != 5 || r.Rate.Burst != 10 || r.Max != 0 {
		t.Errorf("listed %+v: want 4 rows, tenant acme at 5/s burst 10 and no limit of running attempts", rows)
	}
	if r := got["group api"]; r.Max != 4 || r.Rate == nil || r.Rate.Rate != 0.5 {
		t.Errorf("group api listed %+v: want a limit of 4 and a rate of 0.5/s in one row", r)
	}
	code, out, _ = grit(t, "limits", "--store", st)
	if code != 0 || !strings.Contains(out, "WAITING") || !strings.Contains(out, "5/s burst 10") {
		t.Errorf("table: exit %d:\n%s", code, out)
	}
	if code, out, _ := grit(t, "limits", "set", "tenant", "acme", "--rate", "0", "--store", st); code != 0 || !strings.Contains(out, "tenant acme: no rate") {
		t.Errorf("remove: exit %d: %s", code, out)
	}
	if code, out, _ := grit(t, "limits", "--store", st); code != 0 || strings.Contains(out, "acme") {
		t.Errorf("list after removing acme's rate: exit %d: %s", code, out)
	}
	for _, c := range []struct {
		args []string
		says string
	}{
		{[]string{"kind", "k", "1"}, "only a rate"},
		{[]string{"tenant", "acme", "--rate", "5"}, "N/s"},
		{[]string{"tenant", "acme", "--rate", "5/d"}, `per "d"`},
		{[]string{"tenant", "acme", "--burst", "5"}, "goes with --rate"},
		{[]string{"tenant", "acme", "--rate", "5/s", "--burst", "0.5"}, "from 1 to a billion"},
		{[]string{"tenant", "acme", "--rate", "0", "--burst", "5"}, "a rate removed has no burst"},
		{[]string{"run", "r", "--rate", "5/s"}, "want queue, kind, group or tenant"},
		{[]string{"tenant", "acme"}, "give MAX running attempts, or --rate"},
	} {
		code, _, errOut := grit(t, append(append([]string{"limits", "set"}, c.args...), "--store", st)...)
		if code != 2 || !strings.Contains(errOut, c.says) {
			t.Errorf("set %v: exit %d (%s), want 2 saying %q", c.args, code, errOut, c.says)
		}
	}
}

func FuzzParseLimitSet(f *testing.F) {
	for _, s := range [][4]string{{"tenant", "acme", "5", "5/s"}, {"kind", "k", "", "300/m"}, {"group", "g", "1", "0"}, {"queue", "", "-1", "x"}} {
		f.Add(s[0], s[1], s[2], s[3], "10", "")
	}
	f.Add("tenant", "acme", "", "1/s", "", "3")
	f.Fuzz(func(t *testing.T, scope, name, max, rateArg, burst, weight string) {
		args := []string{scope, name}
		if max != "" {
			args = append(args, max)
		}
		var weightP *string
		if weight != "" {
			weightP = &weight
		}
		ch, err := parseLimitSet(args, &rateArg, &burst, weightP)
		if err != nil {
			return
		}
		if w := ch.Weight; w != nil && (scope != "tenant" || store.ValidateWeight(w.Tenant, w.Weight) != nil) {
			t.Errorf("%q --weight %q: accepted %+v", args, weight, w)
		}
		if r := ch.Rate; r == nil || store.ValidateRate(*r) != nil || r.Limit.Burst != 0 && r.Limit.Burst < 1 {
			t.Errorf("%q %q --rate %q --burst %q: accepted %+v", args, max, rateArg, burst, ch.Rate)
		}
		if l := ch.Limit; l != nil && (l.Max < 0 || l.Scope == store.ScopeKind) {
			t.Errorf("%q: accepted the limit %+v", args, l)
		}
	})
}

// A task file's limits are set when it is submitted.
func TestSubmitSetsTheFilesLimits(t *testing.T) {
	t.Parallel()
	st := migratedStore(t)
	path := filepath.Join(t.TempDir(), "sync.yaml")
	file := "name: sync\ntasks:\n  pull: {run: 'true', tenant: acme}\nlimits:\n  tenant acme: {max: 2, rate: 5/s, burst: 10}\n  kind exec: {rate: 300/m}\n"
	if err := os.WriteFile(path, []byte(file), 0o600); err != nil {
		t.Fatal(err)
	}
	if code, out, errOut := grit(t, "submit", path, "--store", st); code != 0 {
		t.Fatalf("submit: exit %d: %s %s", code, out, errOut)
	}
	code, out, _ := grit(t, "limits", "--json", "--store", st)
	var rows []ops.LimitRow
	if err := json.Unmarshal([]byte(out), &rows); code != 0 || err != nil {
		t.Fatalf("list: exit %d, %v: %s", code, err, out)
	}
	if len(rows) != 2 || rows[0].Scope != "tenant" || rows[0].Max != 2 || rows[0].Rate == nil || rows[0].Rate.Burst != 10 ||
		rows[1].Scope != "kind" || rows[1].Rate == nil || rows[1].Rate.Rate != 5 {
		t.Errorf("limits after submitting: %s; want tenant acme (2 running, 5/s burst 10) and kind exec (5/s)", out)
	}
}
