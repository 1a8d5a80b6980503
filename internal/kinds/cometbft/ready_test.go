package cometbft

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/plan"
)

// A seed is ready once its RPC answers, whatever its height: in seed mode
// its chain waits for its next crawl (30 s), which cost every seeded
// testnet 30 s of up. Every other node waits for the ready height and for
// block sync to end.
func TestReadySeedAnswering(t *testing.T) {
	status := func(height int, catchingUp bool) *httptest.Server {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			fmt.Fprintf(w, `{"jsonrpc":"2.0","id":-1,"result":{"node_info":{"id":"x"},"sync_info":{"latest_block_height":"%d","latest_block_time":"2026-11-24T00:00:00Z","catching_up":%t}}}`, height, catchingUp)
		}))
		t.Cleanup(srv.Close)
		return srv
	}
	for _, tc := range []struct {
		role       string
		height     int
		catchingUp bool
		want       bool
		status     string
	}{
		{"seed", 0, true, true, "seed, at height 0"},
		{"validator", 0, true, false, "catching up"},
		{"validator", 1, false, false, "at height 1"},
		{"validator", 2, false, true, "at height 2"},
		{"full", 5, true, false, "catching up"},
	} {
		srv := status(tc.height, tc.catchingUp)
		d := &Driver{ReadyHeight: 2}
		n := &plan.Node{Name: tc.role + "0", Role: tc.role, RPCReach: strings.TrimPrefix(srv.URL, "http://")}
		ready, why := d.Ready(context.Background(), n)
		if ready != tc.want || !strings.Contains(why, tc.status) {
			t.Errorf("%s at height %d (catching up %t): ready %t (%s), want %t (%s)", tc.role, tc.height, tc.catchingUp, ready, why, tc.want, tc.status)
		}
	}
	// A seed that does not answer is not ready.
	d := &Driver{ReadyHeight: 2}
	if ready, _ := d.Ready(context.Background(), &plan.Node{Name: "seed1", Role: "seed", RPCReach: "127.0.0.1:1"}); ready {
		t.Error("a seed whose RPC does not answer is ready")
	}
}
