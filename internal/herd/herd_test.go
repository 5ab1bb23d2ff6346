package herd

import (
	"bytes"
	"fmt"
	"image/color"
	"image/png"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"
)

var small = Config{Clients: 1000, Capacity: 100, Down: 20 * time.Second, Seed: 7}

func TestDeterministicForASeed(t *testing.T) {
	t.Parallel()
	for _, s := range Strategies() {
		a, err := Run(small, s)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := Run(small, s)
		if !reflect.DeepEqual(a, b) {
			t.Errorf("%s: two runs with seed 7 differ: %+v and %+v", s, a.Attempts, b.Attempts)
		}
	}
	other := small
	other.Seed = 8
	a, _ := Run(small, Strategy{Jitter: "full"})
	b, _ := Run(other, Strategy{Jitter: "full"})
	if reflect.DeepEqual(a.Load, b.Load) {
		t.Error("seeds 7 and 8 gave the same run of full jitter")
	}
}

// TestTheHerd checks the model's outcomes, not any speed: without jitter
// the clients come back together, far above capacity; full jitter spreads
// them; the budget and breaker, and the hold, keep the load within a
// fifth over capacity (their ramps find it by passing it a little) and
// spend about one call a client.
func TestTheHerd(t *testing.T) {
	t.Parallel()
	got := map[string]Result{}
	for _, s := range Strategies() {
		r, err := Run(small, s)
		if err != nil {
			t.Fatal(err)
		}
		if !r.Drained || r.Left != 0 || r.Attempts < small.Clients || r.DrainS <= 0 {
			t.Errorf("%s: drained %v (%d left) in %.1fs with %d calls", s, r.Drained, r.Left, r.DrainS, r.Attempts)
		}
		got[s.String()] = r
	}
	none, full := got["none"], got["full"]
	if none.PeakMultiple < 3 || none.PeakMultiple < 2*full.PeakMultiple {
		t.Errorf("peak without jitter %.2fx, with full jitter %.2fx: want the herd", none.PeakMultiple, full.PeakMultiple)
	}
	for _, j := range []string{"none", "equal", "full", "decorrelated"} {
		for _, p := range []string{"+budget+breaker", "+hold"} {
			r := got[j+p]
			if r.PeakMultiple > 1.2+1e-9 || r.Attempts > small.Clients*12/10 || r.DeadLettered != 0 {
				t.Errorf("%s%s: peak %.2fx, %d calls for %d clients (%d unprotected), %d dead-lettered; want at most 1.2x, 1.2 calls a client, none",
					j, p, r.PeakMultiple, r.Attempts, small.Clients, got[j].Attempts, r.DeadLettered)
			}
		}
	}
}

// TestAnOutageIsNotPoison: every client fails alike while the downstream
// is down, so without the hold grit's poison detection would dead-letter
// every one; the hold recognises the outage, dead-letters none, and holds
// every client, calling the downstream far less while it is down.
func TestAnOutageIsNotPoison(t *testing.T) {
	t.Parallel()
	for _, j := range []string{"none", "equal", "full", "decorrelated"} {
		plain, err := Run(small, Strategy{Jitter: j})
		if err != nil {
			t.Fatal(err)
		}
		held, err := Run(small, Strategy{Jitter: j, Hold: true})
		if err != nil {
			t.Fatal(err)
		}
		if plain.DeadLettered != small.Clients || plain.Held != 0 {
			t.Errorf("%s: %d dead-lettered, %d held; want all %d dead-lettered, none held", j, plain.DeadLettered, plain.Held, small.Clients)
		}
		if held.DeadLettered != 0 || held.Held != small.Clients || !held.Drained {
			t.Errorf("%s+hold: %d dead-lettered, %d held, drained %v; want none, all %d, true", j, held.DeadLettered, held.Held, held.Drained, small.Clients)
		}
		if held.DownAttempts*5 > plain.DownAttempts || held.Attempts >= plain.Attempts {
			t.Errorf("%s+hold: %d calls while down (%d in all) against %d (%d) without the hold", j, held.DownAttempts, held.Attempts, plain.DownAttempts, plain.Attempts)
		}
	}
	// The hold's own probes go while the downstream is down, one at a time.
	if r, _ := Run(small, Strategy{Jitter: "full", Hold: true}); r.DownAttempts > small.Clients/5 {
		t.Errorf("full+hold: %d calls while down for %d clients", r.DownAttempts, small.Clients)
	}
}

// TestTooFewToBeAnOutage: fewer clients than the hold needs to call it an
// outage stay poison, hold or not.
func TestTooFewToBeAnOutage(t *testing.T) {
	t.Parallel()
	c := small
	c.Clients = outageTasks - 1
	r, err := Run(c, Strategy{Jitter: "full", Hold: true})
	if err != nil {
		t.Fatal(err)
	}
	if r.DeadLettered != c.Clients || r.Held != 0 {
		t.Errorf("%d clients: %d dead-lettered, %d held; want all dead-lettered", c.Clients, r.DeadLettered, r.Held)
	}
}

func TestUndrainedRunSaysSo(t *testing.T) {
	t.Parallel()
	c := small
	c.Horizon = 25 * time.Second
	r, err := Run(c, Strategy{Jitter: "none"})
	if err != nil {
		t.Fatal(err)
	}
	if r.Drained || r.Left == 0 || r.DrainS != 5 {
		t.Errorf("a run cut at 25s, 5s after the outage: drained %v, %d left, drain %.1fs", r.Drained, r.Left, r.DrainS)
	}
}

func TestBadInput(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		cfg  Config
		says string
	}{
		{Config{Clients: -1}, "clients"},
		{Config{Capacity: -5}, "capacity"},
		{Config{Min: time.Minute, Max: time.Second}, "backoff cap 1s below its first delay 1m0s"},
		{Config{Down: time.Hour}, "the horizon"},
	} {
		if _, err := Run(c.cfg, Strategy{Jitter: "full"}); err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%+v: error %v, want one saying %q", c.cfg, err, c.says)
		}
	}
	if _, err := Run(small, Strategy{Jitter: "full", Protected: true, Hold: true}); err == nil || !strings.Contains(err.Error(), "not simulated") {
		t.Errorf("the budget and breaker with the hold: %v", err)
	}
	if _, err := ParseStrategy("fuzzy+budget"); err == nil || !strings.Contains(err.Error(), "want none, equal, full or decorrelated, each optionally with +budget+breaker or +hold") {
		t.Errorf("bad strategy: %v", err)
	}
	for _, s := range Strategies() {
		if got, err := ParseStrategy(s.String()); err != nil || got != s {
			t.Errorf("%s reads back as %v (%v)", s, got, err)
		}
	}
}

func TestPlot(t *testing.T) {
	t.Parallel()
	var rs []Result
	for _, s := range Strategies() {
		r, _ := Run(small, s)
		rs = append(rs, r)
	}
	var b bytes.Buffer
	if err := Plot(&b, "herd.png", rs, small); err != nil {
		t.Fatal(err)
	}
	c := newChart(rs, small)
	img, err := png.Decode(&b)
	if err != nil || img.Bounds().Dx() != plotW || img.Bounds().Dy() != c.height {
		t.Fatalf("png: %v, %v", err, img)
	}
	b.Reset()
	if err := Plot(&b, "herd.SVG", rs, small); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(b.String(), "<polyline"); n != len(rs) || !strings.Contains(b.String(), "decorrelated+hold") {
		t.Errorf("svg has %d lines for %d strategies", n, len(rs))
	}
	if err := Plot(&b, "herd.gif", rs, small); err == nil || !strings.Contains(err.Error(), "want a .png or .svg") {
		t.Errorf("gif: %v", err)
	}
}

// TestPlotShowsEverySeries: each strategy has a panel of its own, named,
// and a style no other has (a colour per jitter, a dash per protection),
// in the SVG as written and in the PNG as drawn: its line's colour is in
// its panel, and its sample's dashes are its own.
func TestPlotShowsEverySeries(t *testing.T) {
	t.Parallel()
	var rs []Result
	for _, s := range Strategies() {
		r, _ := Run(small, s)
		rs = append(rs, r)
	}
	var b bytes.Buffer
	if err := Plot(&b, "herd.svg", rs, small); err != nil {
		t.Fatal(err)
	}
	line := regexp.MustCompile(`(?s)<g data-strategy="([^"]+)">.*?<polyline fill="none" stroke="([^"]+)" stroke-width="[^"]+"( stroke-dasharray="[^"]+")? points="[^"]+"/>.*?<text [^>]*>([^<]+)</text>`)
	styles := map[string]string{}
	for _, m := range line.FindAllStringSubmatch(b.String(), -1) {
		name, st := m[1], m[2]+m[3]
		if m[4] != name {
			t.Errorf("%s's panel is headed %q", name, m[4])
		}
		if other, ok := styles[st]; ok {
			t.Errorf("%s and %s are both drawn %s", name, other, st)
		}
		styles[st] = name
	}
	if len(styles) != len(rs) {
		t.Errorf("svg: %d series told apart, want %d: %v", len(styles), len(rs), styles)
	}

	b.Reset()
	if err := Plot(&b, "herd.png", rs, small); err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(&b)
	if err != nil {
		t.Fatal(err)
	}
	samples := map[string]string{}
	c := newChart(rs, small)
	for _, p := range c.panels {
		want := color.RGBA{p.style.color[0], p.style.color[1], p.style.color[2], 0xff}
		n := 0
		for y := int(p.y) + 1; y < int(p.y+p.h); y++ {
			for x := int(p.x) + 1; x < int(p.x+p.w); x++ {
				if color.RGBAModel.Convert(img.At(x, y)) == want {
					n++
				}
			}
		}
		if n < 50 {
			t.Errorf("%s: %d pixels of its line in its panel", p.r.Strategy, n)
		}
		var sample strings.Builder
		for x := int(p.x) + 1; x <= int(p.x)+20; x++ {
			if color.RGBAModel.Convert(img.At(x, int(p.y)-24)) == want {
				sample.WriteByte('#')
			} else {
				sample.WriteByte('.')
			}
		}
		key := fmt.Sprint(p.style.color) + sample.String()
		if other, ok := samples[key]; ok {
			t.Errorf("%s and %s are drawn alike: %s", p.r.Strategy, other, key)
		}
		samples[key] = p.r.Strategy
		if _, prot := splitStrategy(p.r.Strategy); (prot == "") != !strings.Contains(sample.String(), ".") {
			t.Errorf("%s: its sample line is %s", p.r.Strategy, sample.String())
		}
	}
}

func FuzzParseStrategy(f *testing.F) {
	for _, s := range Strategies() {
		f.Add(s.String())
	}
	f.Add("full+budget")
	f.Add("full+budget+breaker+hold")
	f.Add("")
	f.Fuzz(func(t *testing.T, name string) {
		s, err := ParseStrategy(name)
		if err != nil {
			if !strings.Contains(err.Error(), "unknown strategy") {
				t.Errorf("%q: error %v does not say what is wrong", name, err)
			}
			return
		}
		if s.String() != name {
			t.Errorf("%q reads as %v, which writes as %q", name, s, s.String())
		}
	})
}
