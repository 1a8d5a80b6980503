package cometbft

import (
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/kinds/cometbft/cometrpc"
)

func TestWarmupLimit(t *testing.T) {
	at := func(secs ...float64) []cometrpc.BlockMeta {
		var out []cometrpc.BlockMeta
		t0 := time.Date(2026, 11, 24, 0, 0, 0, 0, time.UTC)
		for i, s := range secs {
			out = append(out, cometrpc.BlockMeta{Height: int64(i + 2), Time: t0.Add(time.Duration(s * float64(time.Second)))})
		}
		return out
	}
	for _, c := range []struct {
		name  string
		limit time.Duration
		metas []cometrpc.BlockMeta
		want  time.Duration
	}{
		{"one block: no interval", 5 * time.Second, at(0), 5 * time.Second},
		{"fast chain keeps the limit", 5 * time.Second, at(0, 1, 2, 3), 5 * time.Second},
		{"3.3 s blocks stretch it", 5 * time.Second, at(0, 3.3, 6.6), 13200 * time.Millisecond},
		{"a long limit stays", time.Minute, at(0, 3, 6), time.Minute},
	} {
		if got := warmupLimit(c.limit, c.metas); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
