package herd

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"
	"path/filepath"
	"strings"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

// Plot size and margins, in pixels.
const (
	plotW, plotH               = 1100, 540
	left, right, top, bottom   = 70, 330, 40, 50
	innerW, innerH             = plotW - left - right, plotH - top - bottom
	maxLegend, legendLineSpace = 8, 20
)

var palette = []color.RGBA{
	{0xd6, 0x27, 0x28, 0xff}, {0xff, 0x7f, 0x0e, 0xff}, {0x2c, 0xa0, 0x2c, 0xff}, {0x1f, 0x77, 0xb4, 0xff},
	{0x94, 0x67, 0xbd, 0xff}, {0x8c, 0x56, 0x4b, 0xff}, {0xe3, 0x77, 0xc2, 0xff}, {0x17, 0xbe, 0xcf, 0xff},
}

// chart is what both formats draw: load over time, as a multiple of the
// downstream's capacity, one line per strategy.
type chart struct {
	rs       []Result
	cfg      Config
	xMax     float64 // seconds
	yMax     float64 // multiple of capacity
	bucketS  float64
	capacity float64
}

func newChart(rs []Result, cfg Config) chart {
	cfg = cfg.withDefaults()
	// The scale is set by the load after the downstream returns, the part
	// that tells the strategies apart; the first burst, while it is still
	// down, runs off the top.
	c := chart{rs: rs, cfg: cfg, bucketS: cfg.Bucket.Seconds(), capacity: cfg.Capacity, yMax: 1}
	for _, r := range rs {
		c.xMax = max(c.xMax, float64(len(r.Load))*c.bucketS)
		c.yMax = max(c.yMax, r.PeakMultiple*1.1)
	}
	c.yMax = niceCeil(c.yMax)
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

func (c chart) px(t, y float64) (float64, float64) {
	return left + t/c.xMax*innerW, top + innerH - min(y/c.yMax, 1)*innerH
}

// points is a result's line, one point per bucket.
func (c chart) points(r Result) [][2]float64 {
	out := make([][2]float64, len(r.Load))
	for i, l := range r.Load {
		x, y := c.px(float64(i)*c.bucketS, l/c.capacity)
		out[i] = [2]float64{x, y}
	}
	return out
}

func (c chart) title() string {
	return fmt.Sprintf("%d clients, capacity %.0f/s, down %v: load on the downstream (x capacity)", c.cfg.Clients, c.cfg.Capacity, c.cfg.Down)
}

// Plot draws the results to path, as PNG or SVG by its extension.
func Plot(w io.Writer, path string, rs []Result, cfg Config) error {
	if len(rs) > maxLegend {
		return fmt.Errorf("herd: plot: %d strategies, at most %d fit", len(rs), maxLegend)
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

func (c chart) svg(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="12">`+"\n", plotW, plotH)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="22" font-size="14">%s</text>`+"\n", left, esc(c.title()))
	for _, tk := range c.yTicks() {
		_, y := c.px(0, tk)
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#ddd"/><text x="%d" y="%.1f" text-anchor="end">%gx</text>`+"\n", left, y, left+innerW, y, left-6, y+4, tk)
	}
	for _, tk := range c.xTicks() {
		x, _ := c.px(tk, 0)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/><text x="%.1f" y="%d" text-anchor="middle">%gs</text>`+"\n", x, top, x, top+innerH, x, top+innerH+18, tk)
	}
	x, _ := c.px(c.cfg.Down.Seconds(), 0)
	fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#000" stroke-dasharray="2,3"/><text x="%.1f" y="%d">back up</text>`+"\n", x, top, x, top+innerH, x+4, top+14)
	fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#000"/>`+"\n", left, top, innerW, innerH)
	for i, r := range c.rs {
		col := palette[i%len(palette)]
		var pts []string
		for _, p := range c.points(r) {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", p[0], p[1]))
		}
		dash := ""
		if strings.Contains(r.Strategy, "+") {
			dash = ` stroke-dasharray="6,3"`
		}
		fmt.Fprintf(&b, `<polyline fill="none" stroke="rgb(%d,%d,%d)" stroke-width="1.5"%s points="%s"/>`+"\n", col.R, col.G, col.B, dash, strings.Join(pts, " "))
		ly := top + 10 + i*legendLineSpace
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="rgb(%d,%d,%d)" stroke-width="3"%s/><text x="%d" y="%d">%s (peak %.1fx)</text>`+"\n",
			left+innerW+10, ly, left+innerW+34, ly, col.R, col.G, col.B, dash, left+innerW+40, ly+4, esc(r.Strategy), r.PeakMultiple)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">seconds</text>`+"\n", left+innerW/2, plotH-10)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;").Replace(s)
}

func (c chart) yTicks() []float64 { return ticks(c.yMax) }
func (c chart) xTicks() []float64 { return ticks(c.xMax) }

// ticks are 4 to 10 round values from 0 up to v.
func ticks(v float64) []float64 {
	step := niceCeil(v / 8)
	var out []float64
	for t := 0.0; t <= v+step/1e6; t += step {
		out = append(out, t)
	}
	return out
}

func (c chart) png(w io.Writer) error {
	img := image.NewRGBA(image.Rect(0, 0, plotW, plotH))
	fill(img, img.Bounds(), color.RGBA{0xff, 0xff, 0xff, 0xff})
	grey, black := color.RGBA{0xdd, 0xdd, 0xdd, 0xff}, color.RGBA{0, 0, 0, 0xff}
	text(img, left, 22, c.title(), black)
	for _, tk := range c.yTicks() {
		_, y := c.px(0, tk)
		line(img, left, y, left+innerW, y, grey, false)
		label := fmt.Sprintf("%gx", tk)
		text(img, left-6-7*len(label), int(y)+4, label, black)
	}
	for _, tk := range c.xTicks() {
		x, _ := c.px(tk, 0)
		line(img, x, top, x, top+innerH, grey, false)
		label := fmt.Sprintf("%gs", tk)
		text(img, int(x)-7*len(label)/2, top+innerH+18, label, black)
	}
	x, _ := c.px(c.cfg.Down.Seconds(), 0)
	line(img, x, top, x, top+innerH, black, true)
	text(img, int(x)+4, top+14, "back up", black)
	for i, r := range c.rs {
		col := palette[i%len(palette)]
		dashed := strings.Contains(r.Strategy, "+")
		pts := c.points(r)
		for j := 1; j < len(pts); j++ {
			line(img, pts[j-1][0], pts[j-1][1], pts[j][0], pts[j][1], col, dashed)
		}
		ly := float64(top + 10 + i*legendLineSpace)
		for dy := -1.0; dy <= 1; dy++ {
			line(img, left+innerW+10, ly+dy, left+innerW+34, ly+dy, col, dashed)
		}
		text(img, left+innerW+40, int(ly)+4, fmt.Sprintf("%s (peak %.1fx)", r.Strategy, r.PeakMultiple), black)
	}
	box := []float64{left, top, left + innerW, top + innerH}
	line(img, box[0], box[1], box[2], box[1], black, false)
	line(img, box[0], box[3], box[2], box[3], black, false)
	line(img, box[0], box[1], box[0], box[3], black, false)
	line(img, box[2], box[1], box[2], box[3], black, false)
	text(img, left+innerW/2-28, plotH-10, "seconds", black)
	return png.Encode(w, img)
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// line draws from (x0, y0) to (x1, y1), every other few pixels if dashed.
func line(img *image.RGBA, x0, y0, x1, y1 float64, c color.RGBA, dashed bool) {
	n := int(math.Max(math.Abs(x1-x0), math.Abs(y1-y0))) + 1
	for i := 0; i <= n; i++ {
		if dashed && (i/4)%2 == 1 {
			continue
		}
		f := float64(i) / float64(n)
		img.SetRGBA(int(math.Round(x0+(x1-x0)*f)), int(math.Round(y0+(y1-y0)*f)), c)
	}
}

func text(img *image.RGBA, x, y int, s string, c color.RGBA) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
