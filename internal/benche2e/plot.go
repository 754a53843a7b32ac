package benche2e

import (
	"fmt"
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
)

// minPlottedMs is where latencies are clamped on the log axis (the sampler
// may see a crossing a few milliseconds after a kubelet that acted at once).
const minPlottedMs = 1

// PlotLatencies writes a PNG of the latency distributions: per scenario,
// a box of ours next to a box of upstream's, on a log axis.
func PlotLatencies(path string, sums []Summary) error {
	p := plot.New()
	p.Title.Text = "Crossing to kill (ms): evictkit (gates on) vs upstream"
	p.Y.Label.Text = "milliseconds (log)"
	p.Y.Scale = plot.LogScale{}
	p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
	ours, theirs := color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}
	var names []string
	pos := 0.0
	w := vg.Points(18)
	plotted := 0
	for _, s := range sums {
		if len(s.Ours.Latencies) == 0 && len(s.Upstream.Latencies) == 0 {
			continue
		}
		for i, side := range []struct {
			values []float64
			c      color.Color
		}{{s.Ours.Latencies, ours}, {s.Upstream.Latencies, theirs}} {
			if len(side.values) == 0 {
				continue
			}
			vs := make(plotter.Values, len(side.values))
			for k, v := range side.values {
				vs[k] = max(v, minPlottedMs)
			}
			b, err := plotter.NewBoxPlot(w, pos+float64(i)*0.4-0.2, vs)
			if err != nil {
				return fmt.Errorf("box plot of %s: %w", s.Scenario, err)
			}
			b.FillColor = side.c
			p.Add(b)
			plotted++
		}
		names = append(names, s.Scenario)
		pos++
	}
	if plotted == 0 {
		return fmt.Errorf("no latencies to plot")
	}
	p.NominalX(names...)
	p.Legend.Add("evictkit (gates on)", swatch{ours})
	p.Legend.Add("upstream", swatch{theirs})
	p.Legend.Top = true
	return p.Save(vg.Length(160*len(names)+160), 10*vg.Centimeter, path)
}

// swatch is a legend entry: a filled square of one colour.
type swatch struct{ c color.Color }

func (s swatch) Thumbnail(c *draw.Canvas) {
	pts := []vg.Point{
		{X: c.Min.X, Y: c.Min.Y}, {X: c.Max.X, Y: c.Min.Y},
		{X: c.Max.X, Y: c.Max.Y}, {X: c.Min.X, Y: c.Max.Y},
	}
	c.FillPolygon(s.c, c.ClipPolygonXY(pts))
}
