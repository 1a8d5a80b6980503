package chainreport

// PlotTitles are the titles of the report's plots, in order.
func PlotTitles() []string {
	out := make([]string, len(figures))
	for i, f := range figures {
		out[i] = f.title
	}
	return out
}

// EmptyPlots builds every plot of the run report of runDir without drawing
// it and returns, per plot title, why it has no data; empty when every plot
// has data. Tests of real runs assert on it: the plots' own data, not a PNG.
func EmptyPlots(runDir string) (map[string]string, error) {
	r, err := load(runDir)
	if err != nil {
		return nil, err
	}
	empty := map[string]string{}
	for _, f := range figures {
		if p, reason := f.build(r); p == nil {
			empty[f.title] = reason
		}
	}
	return empty, nil
}
