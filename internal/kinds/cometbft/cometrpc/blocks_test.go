package cometrpc

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The files in testdata are real answers of `cometbft start --proxy_app=kvstore`
// (v1.0.1 and v0.38.17) after broadcasting k1=v1, k2=v2 (sync), bad (sync,
// rejected by CheckTx) and k3=v3 (async): one block holds the three good txs.
// Captured with curl -s 'http://127.0.0.1:PORT/block?height=H' | jq .

// serveFiles answers /method?query with testdata/<prefix>-<file> per routes.
func serveFiles(t *testing.T, prefix string, routes map[string]string) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.TrimPrefix(r.URL.Path, "/")
		if r.URL.RawQuery != "" {
			key += "?" + r.URL.RawQuery
		}
		name, ok := routes[key]
		if !ok {
			http.Error(w, "no route "+key, http.StatusNotFound)
			return
		}
		data, err := os.ReadFile(filepath.Join("testdata", prefix+"-"+name))
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(data)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestBlockAndResults(t *testing.T) {
	cases := []struct {
		version       string
		txHeight      int64
		emptyHeight   int64
		time          string
		size          int64
		proposer      string
		blockchainKey string
	}{
		{"v1.0.1", 4, 5, "2026-11-23T10:58:53.834558174Z", 0, "2D47F377EA1C32EE81D072E397C4DA315DEAEDEE", "blockchain?maxHeight=5&minHeight=4"},
		{"v0.38.17", 5, 6, "", 0, "", "blockchain?maxHeight=6&minHeight=5"},
	}
	for _, tc := range cases {
		t.Run(tc.version, func(t *testing.T) {
			h, e := itoa(tc.txHeight), itoa(tc.emptyHeight)
			srv := serveFiles(t, tc.version, map[string]string{
				"block?height=" + h:         "block-" + h + ".json",
				"block?height=" + e:         "block-" + e + ".json",
				"block_results?height=" + h: "block_results-" + h + ".json",
				"block_results?height=" + e: "block_results-" + e + ".json",
				"block?height=99999":        "block-future.json",
				tc.blockchainKey:            "blockchain-" + h + "-" + e + ".json",
				"num_unconfirmed_txs":       "num_unconfirmed_txs.json",
				"status":                    "status.json",
			})
			c := New(srv.URL)
			ctx := context.Background()

			b, err := c.Block(ctx, tc.txHeight)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, tx := range b.Txs {
				got = append(got, string(tx))
			}
			if strings.Join(got, " ") != "k1=v1 k2=v2 k3=v3" {
				t.Errorf("txs = %q", got)
			}
			// Hash of "k1=v1" as broadcast_tx_sync reported it.
			if TxHash(b.Txs[0]) != "BFFEE4EDC505A5255333C65A9A257A9A50B756A40C7B9C344A4AA8F45390D2F1" {
				t.Errorf("TxHash(k1=v1) = %s", TxHash(b.Txs[0]))
			}
			if b.Time.IsZero() || len(b.Proposer) != 40 || len(b.Hash) != 64 {
				t.Errorf("header not decoded: %+v", b)
			}
			if tc.time != "" && b.Time.Format(time.RFC3339Nano) != tc.time {
				t.Errorf("time = %s, want %s", b.Time.Format(time.RFC3339Nano), tc.time)
			}
			if tc.proposer != "" && b.Proposer != tc.proposer {
				t.Errorf("proposer = %s", b.Proposer)
			}

			res, err := c.BlockResults(ctx, tc.txHeight)
			if err != nil {
				t.Fatal(err)
			}
			if len(res) != 3 || res[0].Code != 0 {
				t.Errorf("results = %+v", res)
			}
			res, err = c.BlockResults(ctx, tc.emptyHeight)
			if err != nil || len(res) != 0 {
				t.Errorf("empty block results = %+v, %v", res, err)
			}
			eb, err := c.Block(ctx, tc.emptyHeight)
			if err != nil || len(eb.Txs) != 0 || !eb.Time.After(b.Time) {
				t.Errorf("empty block = %+v, %v", eb, err)
			}

			metas, err := c.BlockMetas(ctx, tc.txHeight, tc.emptyHeight)
			if err != nil {
				t.Fatal(err)
			}
			if len(metas) != 2 || metas[0].Height != tc.txHeight || metas[0].NumTxs != 3 ||
				metas[1].NumTxs != 0 || metas[0].Size <= metas[1].Size || !metas[0].Time.Equal(b.Time) {
				t.Errorf("metas = %+v", metas)
			}

			if _, err := c.Block(ctx, 99999); err == nil || !strings.Contains(err.Error(), "must be less than or equal") {
				t.Errorf("future block: err = %v", err)
			}
			n, err := c.NumUnconfirmedTxs(ctx)
			if err != nil || n != 0 {
				t.Errorf("num_unconfirmed_txs = %d, %v", n, err)
			}
			st, err := c.Status(ctx)
			if err != nil || st.Height < tc.emptyHeight || st.Version != strings.TrimPrefix(tc.version, "v") {
				t.Errorf("status = %+v, %v", st, err)
			}
		})
	}
}

func TestBlockWrongHeight(t *testing.T) {
	srv := serveFiles(t, "v1.0.1", map[string]string{"block?height=7": "block-4.json"})
	if _, err := New(srv.URL).Block(context.Background(), 7); err == nil {
		t.Fatal("a block of another height was accepted")
	}
}

func itoa(h int64) string { return strconv.FormatInt(h, 10) }
