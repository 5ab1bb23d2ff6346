package herd

import (
	"fmt"
	"io"
	"strings"
)

func (c chart) svg(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", plotW, c.height)
	fmt.Fprintf(&b, `<rect width="100%%" height="100%%" fill="white"/>`+"\n")
	fmt.Fprintf(&b, `<text x="%d" y="20" font-size="14">%s</text>`+"\n", left, esc(c.title()))
	fmt.Fprintf(&b, `<text x="%d" y="38" fill="#555">%s</text>`+"\n", left, esc(subtitle))
	for _, p := range c.panels {
		c.svgPanel(&b, p)
	}
	fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle">seconds</text>`+"\n", plotW/2, c.height-8)
	b.WriteString("</svg>\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// svgPanel draws one strategy's panel as a group named after it.
func (c chart) svgPanel(b *strings.Builder, p panel) {
	fmt.Fprintf(b, `<g data-strategy="%s">`+"\n", esc(p.r.Strategy))
	for _, tk := range p.yTicks() {
		_, y := c.px(p, 0, tk)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`, p.x, y, p.x+p.w, y)
		if c.leftmost(p) {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%gx</text>`, p.x-5, y+4, tk)
		}
		b.WriteString("\n")
	}
	labelled := c.lowest(p)
	xt := c.xTicks()
	for i, tk := range xt {
		x, _ := c.px(p, tk, 0)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#eee"/>`, x, p.y, x, p.y+p.h)
		if l := c.xLabel(p, i, len(xt), tk); labelled && l != "" {
			fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`, x, p.y+p.h+14, l)
		}
		b.WriteString("\n")
	}
	if _, y := c.px(p, 0, 1); 1 <= p.yMax {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#888" stroke-dasharray="1,2"/>`+"\n", p.x, y, p.x+p.w, y)
	}
	x, _ := c.px(p, c.cfg.Down.Seconds(), 0)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#000" stroke-dasharray="3,3"/>`+"\n", x, p.y, x, p.y+p.h)
	pts := make([]string, 0, len(p.r.Load))
	for _, q := range c.points(p) {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", q[0], q[1]))
	}
	dash := ""
	if d := p.style.dashArray(); d != "" {
		dash = fmt.Sprintf(` stroke-dasharray="%s"`, d)
	}
	fmt.Fprintf(b, `<polyline fill="none" stroke="%s" stroke-width="1.5"%s points="%s"/>`+"\n", p.style.rgb(), dash, strings.Join(pts, " "))
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="none" stroke="#000"/>`+"\n", p.x, p.y, p.w, p.h)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="3"%s/>`, p.x, p.y-24, p.x+22, p.y-24, p.style.rgb(), dash)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" font-size="12">%s</text>`, p.x+27, p.y-20, esc(p.r.Strategy))
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" fill="#555">%s</text>`+"\n", p.x, p.y-5, esc(p.figures()))
	b.WriteString("</g>\n")
}

func esc(s string) string {
	return strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;", `"`, "&quot;").Replace(s)
}
