package herd

import (
	"fmt"
	"image"
	"image/color"
	"image/png"
	"io"
	"math"

	"golang.org/x/image/font"
	"golang.org/x/image/font/basicfont"
	"golang.org/x/image/math/fixed"
)

var (
	white = color.RGBA{0xff, 0xff, 0xff, 0xff}
	black = color.RGBA{0, 0, 0, 0xff}
	faint = color.RGBA{0xee, 0xee, 0xee, 0xff}
	grey  = color.RGBA{0x88, 0x88, 0x88, 0xff}
	dark  = color.RGBA{0x55, 0x55, 0x55, 0xff}
)

func (c chart) png(w io.Writer) error {
	img := image.NewRGBA(image.Rect(0, 0, plotW, c.height))
	fill(img, img.Bounds(), white)
	text(img, left, 20, c.title(), black)
	text(img, left, 38, subtitle, dark)
	for _, p := range c.panels {
		c.pngPanel(img, p)
	}
	text(img, plotW/2-28, c.height-8, "seconds", black)
	return png.Encode(w, img)
}

func (c chart) pngPanel(img *image.RGBA, p panel) {
	for _, tk := range p.yTicks() {
		_, y := c.px(p, 0, tk)
		(&pen{img: img, c: faint}).line(p.x, y, p.x+p.w, y)
		if c.leftmost(p) {
			label := fmt.Sprintf("%gx", tk)
			text(img, int(p.x)-5-7*len(label), int(y)+4, label, black)
		}
	}
	labelled := c.lowest(p)
	xt := c.xTicks()
	for i, tk := range xt {
		x, _ := c.px(p, tk, 0)
		(&pen{img: img, c: faint}).line(x, p.y, x, p.y+p.h)
		if l := c.xLabel(p, i, len(xt), tk); labelled && l != "" {
			text(img, int(x)-7*len(l)/2, int(p.y+p.h)+14, l, black)
		}
	}
	if _, y := c.px(p, 0, 1); 1 <= p.yMax {
		(&pen{img: img, c: grey, dash: []int{1, 2}}).line(p.x, y, p.x+p.w, y)
	}
	x, _ := c.px(p, c.cfg.Down.Seconds(), 0)
	(&pen{img: img, c: black, dash: []int{3, 3}}).line(x, p.y, x, p.y+p.h)
	col := color.RGBA{p.style.color[0], p.style.color[1], p.style.color[2], 0xff}
	// Two pixels wide: drawn again a pixel across and a pixel down.
	pts := c.points(p)
	for _, d := range [][2]float64{{0, 0}, {1, 0}, {0, 1}} {
		series := &pen{img: img, c: col, dash: p.style.dash}
		for j := 1; j < len(pts); j++ {
			series.line(pts[j-1][0]+d[0], pts[j-1][1]+d[1], pts[j][0]+d[0], pts[j][1]+d[1])
		}
	}
	box := &pen{img: img, c: black}
	box.line(p.x, p.y, p.x+p.w, p.y)
	box.line(p.x, p.y+p.h, p.x+p.w, p.y+p.h)
	box.line(p.x, p.y, p.x, p.y+p.h)
	box.line(p.x+p.w, p.y, p.x+p.w, p.y+p.h)
	for dy := -1.0; dy <= 1; dy++ {
		(&pen{img: img, c: col, dash: p.style.dash}).line(p.x, p.y-24+dy, p.x+22, p.y-24+dy)
	}
	text(img, int(p.x)+27, int(p.y)-20, p.r.Strategy, black)
	text(img, int(p.x), int(p.y)-5, p.figures(), dark)
}

func fill(img *image.RGBA, r image.Rectangle, c color.RGBA) {
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			img.SetRGBA(x, y, c)
		}
	}
}

// pen draws lines in a colour and a dash pattern (pixels on, off, ...;
// nil is solid) that carries on from one line to the next, so that a
// polyline of many short segments is dashed as a whole.
type pen struct {
	img  *image.RGBA
	c    color.RGBA
	dash []int
	at   int // pixels drawn so far along the pattern
}

func (p *pen) line(x0, y0, x1, y1 float64) {
	n := int(math.Max(math.Abs(x1-x0), math.Abs(y1-y0))) + 1
	for i := 0; i < n; i++ {
		if p.on() {
			f := float64(i) / float64(n)
			p.img.SetRGBA(int(math.Round(x0+(x1-x0)*f)), int(math.Round(y0+(y1-y0)*f)), p.c)
		}
		p.at++
	}
}

func (p *pen) on() bool {
	if len(p.dash) == 0 {
		return true
	}
	total := 0
	for _, d := range p.dash {
		total += d
	}
	k := p.at % total
	for i, d := range p.dash {
		if k < d {
			return i%2 == 0
		}
		k -= d
	}
	return true
}

func text(img *image.RGBA, x, y int, s string, c color.RGBA) {
	d := font.Drawer{Dst: img, Src: image.NewUniform(c), Face: basicfont.Face7x13, Dot: fixed.P(x, y)}
	d.DrawString(s)
}
