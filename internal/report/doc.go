package report

import (
	"encoding/base64"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"

	"github.com/benchnet/benchnet/internal/rundir"
)

// A report is built once as a list of blocks and written twice: Markdown
// (GitHub-renderable, images beside it) and HTML (one self-contained file).
type block interface{}

type (
	heading struct {
		level int
		text  string
		id    string
	}
	para  struct{ text string }
	table struct {
		head []string
		rows [][]string
	}
	code    struct{ lang, text string }
	details struct{ summary, text string }
	image   struct {
		alt, file string // file relative to the report
		png       []byte
	}
	noData struct{ reason string }
)

func fmtMs(v float64) string { return strconv.FormatFloat(v, 'f', 1, 64) }

func fmtF(v float64, prec int) string { return strconv.FormatFloat(v, 'f', prec, 64) }

// --- Markdown ---

func mdCell(s string) string {
	s = strings.ReplaceAll(s, "|", `\|`)
	return strings.ReplaceAll(s, "\n", " ")
}

func markdown(blocks []block) []byte {
	var b strings.Builder
	for _, bl := range blocks {
		switch v := bl.(type) {
		case heading:
			fmt.Fprintf(&b, "%s %s\n\n", strings.Repeat("#", v.level), v.text)
		case para:
			fmt.Fprintf(&b, "%s\n\n", v.text)
		case table:
			b.WriteString("|")
			for _, h := range v.head {
				fmt.Fprintf(&b, " %s |", mdCell(h))
			}
			b.WriteString("\n|")
			for range v.head {
				b.WriteString("---|")
			}
			b.WriteString("\n")
			for _, r := range v.rows {
				b.WriteString("|")
				for _, c := range r {
					fmt.Fprintf(&b, " %s |", mdCell(c))
				}
				b.WriteString("\n")
			}
			b.WriteString("\n")
		case code:
			fence := "```"
			for strings.Contains(v.text, fence) {
				fence += "`"
			}
			fmt.Fprintf(&b, "%s%s\n%s\n%s\n\n", fence, v.lang, strings.TrimRight(v.text, "\n"), fence)
		case details:
			fmt.Fprintf(&b, "<details><summary>%s</summary>\n\n```\n%s\n```\n\n</details>\n\n", html.EscapeString(v.summary), strings.TrimRight(v.text, "\n"))
		case image:
			fmt.Fprintf(&b, "![%s](%s)\n\n", v.alt, v.file)
		case noData:
			fmt.Fprintf(&b, "> **no data** — %s\n\n", v.reason)
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

// inlineMd renders the little Markdown the report's own text uses:
// `code`, **bold** and [links](#anchor).
func inlineMd(s string) string {
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

func htmlDoc(title string, blocks []block) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>%s</title>\n<style>\n%s\n</style>\n</head>\n<body>\n", html.EscapeString(title), css)
	for _, bl := range blocks {
		switch v := bl.(type) {
		case heading:
			id := ""
			if v.id != "" {
				id = fmt.Sprintf(" id=%q", v.id)
			}
			fmt.Fprintf(&b, "<h%d%s>%s</h%d>\n", v.level, id, inlineMd(v.text), v.level)
		case para:
			fmt.Fprintf(&b, "<p>%s</p>\n", inlineMd(v.text))
		case table:
			b.WriteString("<table>\n<tr>")
			for _, h := range v.head {
				fmt.Fprintf(&b, "<th>%s</th>", inlineMd(h))
			}
			b.WriteString("</tr>\n")
			for _, r := range v.rows {
				b.WriteString("<tr>")
				for _, c := range r {
					if isNumber(c) {
						fmt.Fprintf(&b, "<td class=\"n\">%s</td>", html.EscapeString(c))
					} else {
						fmt.Fprintf(&b, "<td>%s</td>", inlineMd(c))
					}
				}
				b.WriteString("</tr>\n")
			}
			b.WriteString("</table>\n")
		case code:
			fmt.Fprintf(&b, "<pre><code>%s</code></pre>\n", html.EscapeString(strings.TrimRight(v.text, "\n")))
		case details:
			fmt.Fprintf(&b, "<details><summary>%s</summary><pre>%s</pre></details>\n", html.EscapeString(v.summary), html.EscapeString(strings.TrimRight(v.text, "\n")))
		case image:
			fmt.Fprintf(&b, "<p><img class=\"plot\" alt=\"%s\" src=\"data:image/png;base64,%s\"></p>\n",
				html.EscapeString(v.alt), base64.StdEncoding.EncodeToString(v.png))
		case noData:
			fmt.Fprintf(&b, "<p class=\"nodata\"><b>no data</b> — %s</p>\n", inlineMd(v.reason))
		}
	}
	b.WriteString("</body>\n</html>\n")
	return []byte(b.String())
}

// writeDoc writes a report's plots into outDir/plots/, then its Markdown and
// self-contained HTML as mdName and htmlName; what prefixes errors. It
// returns the files written, Markdown and HTML first.
func writeDoc(what, outDir, mdName, htmlName, title string, blocks []block, pngs map[string][]byte) ([]string, error) {
	if err := os.MkdirAll(filepath.Join(outDir, PlotsDir), 0o755); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	md, htmlPath := filepath.Join(outDir, mdName), filepath.Join(outDir, htmlName)
	written := []string{md, htmlPath}
	for _, name := range sortedKeys(pngs) {
		p := filepath.Join(outDir, PlotsDir, name)
		if err := rundir.WriteAtomic(p, pngs[name]); err != nil {
			return nil, fmt.Errorf("%s: %w", what, err)
		}
		written = append(written, p)
	}
	if err := rundir.WriteAtomic(md, markdown(blocks)); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	if err := rundir.WriteAtomic(htmlPath, htmlDoc(title, blocks)); err != nil {
		return nil, fmt.Errorf("%s: %w", what, err)
	}
	return written, nil
}
