// Package page is what every report is made of: a list of blocks written
// twice, as Markdown (GitHub-renderable, plots beside it) and as one
// self-contained HTML file, and the plots' common style. The generic
// reports (internal/report) and each node kind's report sections use it.
package page

import (
	"encoding/base64"
	"fmt"
	"html"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/rundir"
)

// PlotsDir is where a report's plots go, beside its Markdown.
const PlotsDir = "plots"

// Block is one element of a report: one of the types below.
type Block interface{}

type (
	Heading struct {
		Level int
		Text  string
		ID    string
	}
	Para  struct{ Text string }
	Table struct {
		Head []string
		Rows [][]string
	}
	Code    struct{ Lang, Text string }
	Details struct{ Summary, Text string }
	Image   struct {
		Alt, File string // File relative to the report
		PNG       []byte
	}
	NoData struct{ Reason string }
)

// Ms formats milliseconds with one decimal.
func Ms(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

// F formats v with prec decimals.
func F(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// Itoa is strconv.Itoa, short for table cells.
func Itoa(i int) string { return strconv.Itoa(i) }

// DashIfEmpty is s, or a dash for an empty cell.
func DashIfEmpty(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

// SortedKeys are m's keys in order.
func SortedKeys[V any](m map[string]V) []string {
	return slices.Sorted(maps.Keys(m))
}

// --- Markdown ---

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

// Markdown writes blocks as GitHub Markdown.
func Markdown(blocks []Block) []byte {
	var b strings.Builder
	for _, bl := range blocks {
		switch v := bl.(type) {
		case Heading:
			fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", v.Level), v.Text)
		case Para:
			fmt.Fprintf(&b, "%s\n\n", v.Text)
		case Table:
			b.WriteString("|")
			for _, h := range v.Head {
				fmt.Fprintf(&b, " %s |", mdCell(h))
			}
			b.WriteString("\n|")
			for range v.Head {
				b.WriteString("---|")
			}
			b.WriteString("\n")
			for _, r := range v.Rows {
				b.WriteString("|")
				for _, c := range r {
					fmt.Fprintf(&b, " %s |", mdCell(c))
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		case Code:
			fence := "```"
			for strings.Contains(v.Text, fence) {
				fence += "`"
			}
			fmt.Fprintf(&b, "%s%s\n%s\n%s\n\n", fence, v.Lang, strings.TrimRight(v.Text, "\n"), fence)
		case Details:
			fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n```\n%s\n```\n\n</details>\n\n", html.EscapeString(v.Summary), strings.TrimRight(v.Text, "\n"))
		case Image:
			fmt.Fprintf(&b, "![%s](%s)\n\n", v.Alt, v.File)
		case NoData:
			fmt.Fprintf(&b, "> **no data** — %s\n\n", v.Reason)
		}
	}
	return []byte(b.String())
}

// --- HTML ---

const css = `body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
table{border-collapse:collapse;margin:0.5em 0 1.2em}th,td{border:1px solid #ccc;padding:3px 8px;text-align:left;vertical-align:top}
th{background:#f2f2f2}td.n{text-align:right;font-variant-numeric:tabular-nums}
pre{background:#f6f8fa;padding:0.8em;overflow-x:auto;font-size:90%}img{max-width:100%;border:1px solid #eee}
.nodata{background:#fff4e5;border-left:4px solid #f0a020;padding:0.5em 1em}h2{border-bottom:1px solid #ddd;padding-bottom:0.2em}`

// mdLink is a Markdown link [text](target); targets have no spaces or ")".
var mdLink = regexp.MustCompile(`\[([^\]]+)\]\(([^)\s]+)\)`)

// InlineMd renders the little Markdown the reports' own text uses:
// `code`, **bold** and [links](#anchor).
func InlineMd(s string) string {
	s = html.EscapeString(s)
	s = mdLink.ReplaceAllString(s, `<a href="$2">$1</a>`)
	for _, m := range []struct{ delim, open, close string }{{"`", "<code>", "</code>"}, {"**", "<b>", "</b>"}} {
		parts := strings.Split(s, m.delim)
		if len(parts)%2 == 0 {
			continue // unbalanced: leave as is
		}
		var b strings.Builder
		for i, p := range parts {
			if i%2 == 1 {
				b.WriteString(m.open + p + m.close)
			} else {
				b.WriteString(p)
			}
		}
		s = b.String()
	}
	return s
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(strings.TrimSuffix(s, "%"), 64)
	return err == nil
}

// HTML writes blocks as one self-contained HTML document, plots inline.
func HTML(title string, blocks []Block) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", html.EscapeString(title), css)
	for _, bl := range blocks {
		switch v := bl.(type) {
		case Heading:
			id := ""
			if v.ID != "" {
				id = fmt.Sprintf(" id=%q", v.ID)
			}
			fmt.Fprintf(&b, "<h%d%s>%s</h%d>\n", v.Level, id, InlineMd(v.Text), v.Level)
		case Para:
			fmt.Fprintf(&b, "<p>%s</p>\n", InlineMd(v.Text))
		case Table:
			b.WriteString("<table>\n<tr>")
			for _, h := range v.Head {
				fmt.Fprintf(&b, "<th>%s</th>", InlineMd(h))
			}
			b.WriteString("</tr>\n")
			for _, r := range v.Rows {
				b.WriteString("<tr>")
				for _, c := range r {
					if isNumber(c) {
						fmt.Fprintf(&b, "<td class=\"n\">%s</td>", html.EscapeString(c))
					} else {
						fmt.Fprintf(&b, "<td>%s</td>", InlineMd(c))
					}
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</table>\n")
		case Code:
			fmt.Fprintf(&b, "<pre><code>%s</code></pre>\n", html.EscapeString(strings.TrimRight(v.Text, "\n")))
		case Details:
			fmt.Fprintf(&b, "<details><summary>%s</summary><pre>%s</pre></details>\n", html.EscapeString(v.Summary), html.EscapeString(strings.TrimRight(v.Text, "\n")))
		case Image:
			fmt.Fprintf(&b, "<p><img class=\"plot\" alt=\"%s\" src=\"data:image/png;base64,%s\"></p>\n",
				html.EscapeString(v.Alt), base64.StdEncoding.EncodeToString(v.PNG))
		case NoData:
			fmt.Fprintf(&b, "<p class=\"nodata\"><b>no data</b> — %s</p>\n", InlineMd(v.Reason))
		}
	}
	b.WriteString("</body>\n</html>\n")
	return []byte(b.String())
}

// Write writes a report's plots into outDir/plots/, then its Markdown and
// self-contained HTML as mdName and htmlName; what prefixes errors. It
// returns the files written, Markdown and HTML first.
func Write(what, outDir, mdName, htmlName, title string, blocks []Block, pngs map[string][]byte) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(outDir, PlotsDir), 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	md, htmlPath := filepath.Join(outDir, mdName), filepath.Join(outDir, htmlName)
	written := []string{md, htmlPath}
	for _, name := range SortedKeys(pngs) {
		p := filepath.Join(outDir, PlotsDir, name)
		if err := rundir.WriteAtomic(p, pngs[name]); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		written = append(written, p)
	}
	if err := rundir.WriteAtomic(md, Markdown(blocks)); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := rundir.WriteAtomic(htmlPath, HTML(title, blocks)); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return written, nil
}

// G is v in the shortest form that reads back exactly ('g', no exponent
// for the sizes reports show).
func G(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
