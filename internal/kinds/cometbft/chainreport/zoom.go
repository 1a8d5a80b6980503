package chainreport

import (
	"github.com/benchnet/benchnet/internal/report"
	"github.com/benchnet/benchnet/internal/report/page"
)

// renderZoomed is the run report with its time plots zoomed into outDir
// (report.RenderZoomed has checked that outDir is not the run directory).
func renderZoomed(runDir, outDir string, z report.Zoom) ([]string, error) {
	r, err := load(runDir)
	if err != nil {
		return nil, err
	}
	r.zoom = z
	blocks, pngs, err := r.build()
	if err != nil {
		return nil, err
	}
	return page.Write("report", outDir, report.MarkdownFile, report.HTMLFile, r.title(), blocks, pngs)
}
