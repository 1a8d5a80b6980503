package collect

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/promtext"
	"github.com/benchnet/benchnet/internal/rundir"
)

// BenchmarkScrape parses one real CometBFT v1.0.1 exposition and writes its
// samples to a gzip metrics file, as one node's scrape each second does.
func BenchmarkScrape(b *testing.B) {
	data, err := os.ReadFile(realExposition)
	if err != nil {
		b.Fatal(err)
	}
	d := &rundir.Dir{Path: b.TempDir()}
	c := New(d, nil, 0)
	if err := c.open(); err != nil {
		b.Fatal(err)
	}
	defer c.close()
	buf := &promtext.Parser{}
	b.ReportAllocs()
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		buf.Reset()
		if err := buf.Parse(bytes.NewReader(data)); err != nil {
			b.Fatal(err)
		}
		c.writeSamples(time.Unix(1700000000, 0), "validator0", buf)
	}
	b.ReportMetric(float64(len(buf.Samples)), "samples")
}
