package retention

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/grit-run/grit/task"
)

func TestParse(t *testing.T) {
	t.Parallel()
	p, err := Parse("success=1h, failed=30d, mail/success=10m, mail/failed=forever, workers=2h")
	if err != nil {
		t.Fatal(err)
	}
	if p.Keep[task.Success] != time.Hour || p.Keep[task.Failed] != 30*24*time.Hour || p.Keep[task.Cancelled] != 24*time.Hour ||
		p.Queues["mail"][task.Success] != 10*time.Minute || p.Queues["mail"][task.Failed] != Forever || p.Workers != 2*time.Hour {
		t.Errorf("parsed %+v", p)
	}
	found := map[string]time.Duration{}
	for _, r := range p.Rules() {
		if err := r.Validate(); err != nil {
			t.Errorf("rule %+v: %v", r, err)
		}
		found[r.Queue+"/"+string(r.State)] = r.Keep
	}
	if found["/SUCCESS"] != time.Hour || found["mail/SUCCESS"] != 10*time.Minute || found["mail/FAILED"] < 50*365*24*time.Hour || found["/DEAD_LETTER"] != 0 {
		t.Errorf("rules %v: want each state's, the queue's own, mail's failures kept for ever, no dead letters", found)
	}
	if off, err := Parse("off"); err != nil || !off.Off || off.String() != "off" {
		t.Errorf("off: %+v, %v", off, err)
	}
	if def, err := Parse(""); err != nil || def.String() != Default().String() {
		t.Errorf("empty: %v, %v", def, err)
	}
	for in, want := range map[string]string{
		"success":          "is not KEY=DURATION",
		"dead_letter=1h":   "kept until an operator",
		"running=1h":       "is not a finished state",
		"success=0":        "want a positive duration",
		"success=-1h":      "want a positive duration",
		"success=0d":       "whole number of days",
		"/success=1h":      "want a queue name",
		"workers=soon":     "want a positive duration",
		"success=1h,,":     "is not KEY=DURATION",
		"failed=99999999d": "whole number of days",
	} {
		_, err := Parse(in)
		if err == nil || !errors.Is(err, ErrParse) || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "e.g.") {
			t.Errorf("Parse(%q) = %v, want an error saying %q and showing an example", in, err, want)
		}
	}
}

// FuzzParse: any text parses to a policy that writes back to text that
// parses to the same policy, or to an error wrapping ErrParse.
func FuzzParse(f *testing.F) {
	for _, s := range []string{"", "off", "success=1h", "success=1h,mail/failed=forever,workers=7d", "x/skipped=90m", "a/b/c=1h", "success=1h,=2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		p, err := Parse(s)
		if err != nil {
			if !errors.Is(err, ErrParse) {
				t.Fatalf("Parse(%q): %v does not wrap ErrParse", s, err)
			}
			return
		}
		again, err := Parse(p.String())
		if err != nil || again.String() != p.String() {
			t.Fatalf("Parse(%q).String() = %q parses to %q, %v", s, p.String(), again.String(), err)
		}
		for _, r := range p.Rules() {
			if err := r.Validate(); err != nil {
				t.Fatalf("Parse(%q) gives a rule the store refuses: %+v: %v", s, r, err)
			}
		}
	})
}
