package report

import (
	"github.com/benchnet/benchnet/internal/report/page"
	"github.com/benchnet/benchnet/internal/rundir"
)

// writeDoc is page.Write with the sheet link ending every experiment report.
func writeDoc(what, outDir, mdName, htmlName, title string, blocks []page.Block, pngs map[string][]byte) ([]string, error) {
	return page.Write(what, outDir, mdName, htmlName, title, append(blocks, sheetLink), pngs)
}

// sheetLink ends every experiment report: its runs in one sheet.
var sheetLink = page.Para{Text: "Every run of this directory in one sheet, one row per run with its load, build and every judged metric: [" +
	rundir.SheetFile + "](" + rundir.SheetFile + ") (written when the command ends; `benchnet export DIR --format csv` remakes it)."}
