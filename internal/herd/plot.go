package herd

import (
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strings"
)

// The plot is small multiples: a panel per strategy, a row per protection
// (none, the budget and breaker, the hold) and a column per jitter, so
// that no line can hide another, as the protected strategies' lines,
// nearly alike, hid each other on one chart. Sizes are in pixels.
const (
	plotW                    = 1100
	left, right, top, bottom = 60, 20, 78, 44
	panelH, gapX, gapY       = 170, 20, 52
	maxPanels                = 16
)

// style is how a series is drawn: a colour per jitter, a dash pattern per
// protection, so that a series stays told apart from the rest even out of
// its panel (as in its heading's sample).
type style struct {
	color [3]uint8
	dash  []int // pixels on, off, ...; nil is solid
}

var jitterColors = map[string][3]uint8{
	"none": {0xd6, 0x27, 0x28}, "equal": {0xff, 0x7f, 0x0e}, "full": {0x2c, 0xa0, 0x2c}, "decorrelated": {0x1f, 0x77, 0xb4},
}

var protectionDashes = map[string][]int{"": nil, "+budget+breaker": {6, 3}, "+hold": {8, 3, 2, 3}}

// splitStrategy parts a strategy's name into its jitter and its
// protection suffix ("", "+budget+breaker" or "+hold").
func splitStrategy(name string) (jitter, protection string) {
	if i := strings.IndexByte(name, '+'); i >= 0 {
		return name[:i], name[i:]
	}
	return name, ""
}

func styleOf(name string) style {
	j, p := splitStrategy(name)
	return style{color: jitterColors[j], dash: protectionDashes[p]}
}

func (s style) rgb() string { return fmt.Sprintf("rgb(%d,%d,%d)", s.color[0], s.color[1], s.color[2]) }

func (s style) dashArray() string {
	if s.dash == nil {
		return ""
	}
	parts := make([]string, len(s.dash))
	for i, d := range s.dash {
		parts[i] = fmt.Sprint(d)
	}
	return strings.Join(parts, ",")
}

// panel is one strategy's chart: where it is, its scale, and its line.
type panel struct {
	r          Result
	style      style
	x, y, w, h float64
	yMax       float64 // multiple of capacity at the top
	row, col   int
}

// chart is what both formats draw: load over time, as a multiple of the
// downstream's capacity, a panel per strategy.
type chart struct {
	cfg        Config
	panels     []panel
	rows, cols int
	height     int
	xMax       float64 // seconds, shared by every panel
	bucketS    float64
}

func newChart(rs []Result, cfg Config) chart {
	cfg = cfg.withDefaults()
	c := chart{cfg: cfg, bucketS: cfg.Bucket.Seconds()}
	var jitters, protections []string
	for _, r := range rs {
		j, p := splitStrategy(r.Strategy)
		if !slices.Contains(jitters, j) {
			jitters = append(jitters, j)
		}
		if !slices.Contains(protections, p) {
			protections = append(protections, p)
		}
		c.xMax = max(c.xMax, float64(len(r.Load))*c.bucketS)
	}
	c.rows, c.cols = len(protections), len(jitters)
	c.height = top + c.rows*panelH + (c.rows-1)*gapY + bottom
	// A row shares its scale, set by the load after the downstream returns
	// (the part that tells strategies apart; the first burst, while it is
	// still down, runs off the top); rows differ by tenfold, and one scale
	// would flatten the protected strategies into the axis.
	rowMax := make([]float64, c.rows)
	w := (float64(plotW-left-right) - float64(c.cols-1)*gapX) / float64(c.cols)
	for _, r := range rs {
		j, p := splitStrategy(r.Strategy)
		row, col := slices.Index(protections, p), slices.Index(jitters, j)
		rowMax[row] = max(rowMax[row], r.PeakMultiple*1.1, 1.1)
		c.panels = append(c.panels, panel{r: r, style: styleOf(r.Strategy), row: row, col: col,
			x: left + float64(col)*(w+gapX), y: top + float64(row)*(panelH+gapY), w: w, h: panelH})
	}
	for i := range c.panels {
		c.panels[i].yMax = niceCeil(rowMax[c.panels[i].row])
	}
	return c
}

func niceCeil(v float64) float64 {
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= v {
			return m * p
		}
	}
	return 10 * p
}

func (c chart) px(p panel, t, y float64) (float64, float64) {
	return p.x + t/c.xMax*p.w, p.y + p.h - min(y/p.yMax, 1)*p.h
}

// points is a panel's line, one point per bucket.
func (c chart) points(p panel) [][2]float64 {
	out := make([][2]float64, len(p.r.Load))
	for i, l := range p.r.Load {
		x, y := c.px(p, float64(i)*c.bucketS, l/c.cfg.Capacity)
		out[i] = [2]float64{x, y}
	}
	return out
}

func (c chart) title() string {
	return fmt.Sprintf("%d clients, capacity %.0f/s, down %v: load on the downstream (x capacity) over time", c.cfg.Clients, c.cfg.Capacity, c.cfg.Down)
}

const subtitle = "simulated; a row per protection, with its own scale; dotted: capacity; dashed: back up"

// figures are a panel's numbers, under its name.
func (p panel) figures() string {
	return fmt.Sprintf("peak %.1fx, %d calls, %d dead", p.r.PeakMultiple, p.r.Attempts, p.r.DeadLettered)
}

// xLabel is a panel's label for an x tick, or "" where it would run into
// a neighbour's: the first tick but in the first column, the last but in
// the last.
func (c chart) xLabel(p panel, i, n int, tk float64) string {
	if (i == 0 && p.col > 0) || (i == n-1 && p.col < c.cols-1) {
		return ""
	}
	return fmt.Sprintf("%gs", tk)
}

// Plot draws the results to path, as PNG or SVG by its extension.
func Plot(w io.Writer, path string, rs []Result, cfg Config) error {
	if len(rs) > maxPanels {
		return fmt.Errorf("herd: plot: %d strategies, at most %d fit", len(rs), maxPanels)
	}
	c := newChart(rs, cfg)
	switch strings.ToLower(filepath.Ext(path)) {
	case ".svg":
		return c.svg(w)
	case ".png":
		return c.png(w)
	}
	return fmt.Errorf("herd: plot %s: want a .png or .svg file", path)
}

// leftmost tells whether no panel is drawn left of p: its y axis is
// labelled.
func (c chart) leftmost(p panel) bool {
	for _, q := range c.panels {
		if q.row == p.row && q.col < p.col {
			return false
		}
	}
	return true
}

// lowest tells whether no panel is drawn below p: its x axis is labelled.
func (c chart) lowest(p panel) bool {
	for _, q := range c.panels {
		if q.col == p.col && q.row > p.row {
			return false
		}
	}
	return true
}

// ticks are 4 to 10 round values from 0 up to v.
func ticks(v float64, n int) []float64 {
	step := niceCeil(v / float64(n))
	var out []float64
	for t := 0.0; t <= v+step/1e6; t += step {
		out = append(out, t)
	}
	return out
}

func (c chart) xTicks() []float64 { return ticks(c.xMax, 4) }
func (p panel) yTicks() []float64 { return ticks(p.yMax, 4) }
