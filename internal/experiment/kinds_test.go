package experiment

import "testing"

// --fail-on before the kind is known: any kind's key passes, an unknown
// one is refused with the known keys, "all" is every metric.
func TestParseFailOn(t *testing.T) {
	cases := []struct {
		in      string
		n       int
		wantErr bool
	}{
		{"all", 0, false},
		{"", 0, false},
		{"tps, latency_p95", 2, false},
		{"mdr,tps", 2, false},
		{"tps,latency_p77", 0, true},
	}
	for _, c := range cases {
		got, err := ParseFailOn(c.in)
		if (err != nil) != c.wantErr || len(got) != c.n {
			t.Errorf("ParseFailOn(%q) = %v, %v", c.in, got, err)
		}
	}
}
