package report

import (
	"gonum.org/v1/plot"

	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// The reports here are built of internal/report/page's blocks and plot
// style, under short local names.
type (
	block   = page.Block
	heading = page.Heading
	para    = page.Para
	table   = page.Table
	code    = page.Code
	image   = page.Image
	noData  = page.NoData
)

func fmtMs(v float64) string                      { return page.Ms(v) }
func fmtF(v float64, prec int) string             { return page.F(v, prec) }
func dashIfEmpty(s string) string                 { return page.DashIfEmpty(s) }
func markdown(blocks []block) []byte              { return page.Markdown(blocks) }
func htmlDoc(title string, blocks []block) []byte { return page.HTML(title, blocks) }
func newPlot(title, x, y string) *plot.Plot       { return page.NewPlot(title, x, y) }
func addLegend(p *plot.Plot, name string, thumb ...plot.Thumbnailer) {
	page.AddLegend(p, name, thumb...)
}
func makeRoom(p *plot.Plot)                  { page.MakeRoom(p) }
func renderPNG(p *plot.Plot) ([]byte, error) { return page.RenderPNG(p) }

// writeDoc is page.Write.
func writeDoc(what, outDir, mdName, htmlName, title string, blocks []block, pngs map[string][]byte) ([]string, error) {
	return page.Write(what, outDir, mdName, htmlName, title, append(blocks, sheetLink), pngs)
}

// sheetLink ends every experiment report: its runs in one sheet.
var sheetLink = para{Text: "Every run of this directory in one sheet, one row per run with its load, build and every judged metric: [" +
	rundir.SheetFile + "](" + rundir.SheetFile + ") (written when the command ends; `benchnet export DIR --format csv` remakes it)."}

const (
	plotW = page.W
	plotH = page.H
)

func fmtG(v float64) string { return page.G(v) }
