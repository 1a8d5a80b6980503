package export

import (
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

// No Grafana is packaged for Debian, so dashboards/benchnet.json is checked
// against Grafana's dashboard schema as its kind reference states it
// (docs/sources/developers/kinds/core/dashboard/schema-reference.md,
// grafana/grafana 01639dc: the required fields of the dashboard, its
// panels, grid positions, field configs and template variables, and their
// constraints), and its queries run on a Prometheus holding an export
// (TestOpenMetricsBackfill).

type dashboard struct {
	raw    map[string]any
	panels []map[string]any
	vars   []map[string]any
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	root, err := testenv.ModuleRoot()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(filepath.Join(root, "dashboards", "benchnet.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(data, &d.raw); err != nil {
		t.Fatalf("dashboards/benchnet.json: %v", err)
	}
	for _, p := range d.raw["panels"].([]any) {
		d.panels = append(d.panels, p.(map[string]any))
	}
	if tm, ok := d.raw["templating"].(map[string]any); ok {
		for _, v := range tm["list"].([]any) {
			d.vars = append(d.vars, v.(map[string]any))
		}
	}
	return d
}

// target is one panel query.
type dashTarget struct {
	panel, refID, expr string
}

func (d dashboard) targets() []dashTarget {
	var out []dashTarget
	for _, p := range d.panels {
		for _, x := range p["targets"].([]any) {
			x := x.(map[string]any)
			out = append(out, dashTarget{p["title"].(string), x["refId"].(string), x["expr"].(string)})
		}
	}
	return out
}

// resolve substitutes the dashboard's variables as Grafana would with
// their defaults: namespace cometbft, every node, a 1 m rate interval.
func resolve(expr string) string {
	return strings.NewReplacer("${ns}", "cometbft", "$node", ".*", "$__rate_interval", "1m").Replace(expr)
}

func isInt(v any) bool {
	f, ok := v.(float64)
	return ok && f == float64(int64(f))
}

func TestDashboardSchema(t *testing.T) {
	d := loadDashboard(t)
	req := func(where string, obj map[string]any, keys ...string) {
		for _, k := range keys {
			if _, ok := obj[k]; !ok {
				t.Errorf("%s: required %q missing", where, k)
			}
		}
	}
	req("dashboard", d.raw, "schemaVersion", "title", "uid", "panels")
	if v := d.raw["schemaVersion"]; !isInt(v) || v.(float64) < 0 || v.(float64) > 65535 {
		t.Errorf("schemaVersion %v: want a uint16", v)
	}
	if uid, _ := d.raw["uid"].(string); len(uid) < 8 || len(uid) > 40 {
		t.Errorf("uid %q: want 8 to 40 characters", uid)
	}
	if g := d.raw["graphTooltip"]; g != nil && g != 0.0 && g != 1.0 && g != 2.0 {
		t.Errorf("graphTooltip %v: want 0, 1 or 2", g)
	}
	ids := map[float64]bool{}
	type cell struct{ x, y int }
	used := map[cell]string{}
	for _, p := range d.panels {
		title, _ := p["title"].(string)
		where := "panel " + title
		req(where, p, "type", "fieldConfig", "options", "repeatDirection", "transformations", "transparent", "gridPos", "id", "targets", "datasource")
		if typ, _ := p["type"].(string); typ == "" {
			t.Errorf("%s: empty type", where)
		}
		if rd := p["repeatDirection"]; rd != "h" && rd != "v" {
			t.Errorf("%s: repeatDirection %v", where, rd)
		}
		if fc, ok := p["fieldConfig"].(map[string]any); ok {
			req(where+" fieldConfig", fc, "defaults", "overrides")
		}
		id, _ := p["id"].(float64)
		if !isInt(p["id"]) || id < 0 || ids[id] {
			t.Errorf("%s: id %v: want a unique uint32", where, p["id"])
		}
		ids[id] = true
		g, _ := p["gridPos"].(map[string]any)
		req(where+" gridPos", g, "h", "w", "x", "y")
		h, w, x, y := g["h"].(float64), g["w"].(float64), g["x"].(float64), g["y"].(float64)
		if !(h >= 1 && w > 0 && w <= 24 && x >= 0 && x < 24 && x+w <= 24 && y >= 0) {
			t.Errorf("%s: gridPos %v: want w in (0,24], x in [0,24), x+w <= 24, h >= 1", where, g)
		}
		for cx := int(x); cx < int(x+w); cx++ {
			for cy := int(y); cy < int(y+h); cy++ {
				if other, ok := used[cell{cx, cy}]; ok {
					t.Fatalf("%s overlaps %s at (%d,%d)", where, other, cx, cy)
				}
				used[cell{cx, cy}] = where
			}
		}
		refs := map[string]bool{}
		for _, x := range p["targets"].([]any) {
			x := x.(map[string]any)
			r, _ := x["refId"].(string)
			if r == "" || refs[r] {
				t.Errorf("%s: refId %q empty or repeated", where, r)
			}
			refs[r] = true
		}
	}
	names := map[string]bool{}
	for _, v := range d.vars {
		name, _ := v["name"].(string)
		req("variable "+name, v, "global", "hide", "id", "index", "name", "skipUrlSync", "state", "type")
		switch v["type"] {
		case "query", "adhoc", "constant", "datasource", "interval", "textbox", "custom", "system":
		default:
			t.Errorf("variable %s: type %v", name, v["type"])
		}
		names[name] = true
	}
	// Every variable a query names is defined (or Grafana's own).
	ref := regexp.MustCompile(`\$\{?([A-Za-z_][A-Za-z0-9_]*)`)
	for _, x := range d.targets() {
		for _, m := range ref.FindAllStringSubmatch(x.expr, -1) {
			if !names[m[1]] && !strings.HasPrefix(m[1], "__") {
				t.Errorf("panel %s %s: $%s is not a dashboard variable", x.panel, x.refID, m[1])
			}
		}
		if strings.Contains(resolve(x.expr), "$") {
			t.Errorf("panel %s %s: %q keeps a variable after substitution", x.panel, x.refID, resolve(x.expr))
		}
	}
	// The QA's panels are all there (the list).
	var titles []string
	for _, p := range d.panels {
		titles = append(titles, strings.ToLower(p["title"].(string)))
	}
	all := strings.Join(titles, "|")
	for _, want := range []string{"mempool", "peers", "rounds", "blocks per minute", "transactions per minute", "block size", "rss", "cpu", "load"} {
		if !strings.Contains(all, want) {
			t.Errorf("no panel on %s (panels: %v)", want, titles)
		}
	}
}
