package accounts

import (
	"bufio"
	"crypto/ed25519"
	"encoding/binary"
	"io"
	"net"
	"path/filepath"
	"strings"
	"testing"
	"time"

	abcicli "github.com/cometbft/cometbft/abci/client"
	abci "github.com/cometbft/cometbft/abci/types"
	"google.golang.org/protobuf/encoding/protowire"
)

// TestSocketServer: CometBFT v1.0.1's own socket client talks to the
// server (Echo, Info, CheckTx, a block), and a v0.40 node's two extra
// requests, written as v0.40.0's proto numbers them (Request.insert_tx
// 21, reap_txs 22), are answered as Response.insert_tx 22 and reap_txs 23.
func TestSocketServer(t *testing.T) {
	app := newPoolApp(t)
	addr := "unix://" + filepath.Join(t.TempDir(), "app.sock")
	srv, err := newSocketServer(app, addr, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.stop() })

	cli := abcicli.NewSocketClient(addr, true)
	if err := cli.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cli.Stop() })
	if r, err := cli.Echo(ctx, "hello"); err != nil || r.Message != "hello" {
		t.Fatalf("echo: %v %v", r, err)
	}
	if r, err := cli.Info(ctx, &abci.InfoRequest{}); err != nil || r.Data != "benchnet-accounts" {
		t.Fatalf("info: %v %v", r, err)
	}
	k := KeyFor(7, "sock", 0)
	if r, err := cli.CheckTx(ctx, &abci.CheckTxRequest{Tx: transfer(k, 1)}); err != nil || r.Code != CodeOK {
		t.Fatalf("check: %v %v", r, err)
	}

	// The v0.40 requests, raw, on a connection of their own.
	_, path, _ := strings.Cut(addr, "://")
	c, err := net.DialTimeout("unix", path, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	r := bufio.NewReader(c)
	roundTrip := func(field protowire.Number, msg []byte) (protowire.Number, []byte) {
		t.Helper()
		req := protowire.AppendBytes(protowire.AppendTag(nil, field, protowire.BytesType), msg)
		if _, err := c.Write(append(binary.AppendUvarint(nil, uint64(len(req))), req...)); err != nil {
			t.Fatal(err)
		}
		n, err := binary.ReadUvarint(r)
		if err != nil {
			t.Fatal(err)
		}
		resp := make([]byte, n)
		if _, err := io.ReadFull(r, resp); err != nil {
			t.Fatal(err)
		}
		num, typ, m := protowire.ConsumeTag(resp)
		if m < 0 || typ != protowire.BytesType {
			t.Fatalf("response: tag %d type %d", m, typ)
		}
		body, m2 := protowire.ConsumeBytes(resp[m:])
		if m2 < 0 {
			t.Fatal("response body")
		}
		return num, body
	}
	tx0 := transfer(k, 0)
	num, body := roundTrip(21, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), tx0))
	if num != 22 || len(body) != 0 { // code 0: proto3 writes no field
		t.Fatalf("insert_tx: response field %d, body %x; want 22 and code 0", num, body)
	}
	num, body = roundTrip(21, protowire.AppendBytes(protowire.AppendTag(nil, 1, protowire.BytesType), transfer(k, 0)[:10]))
	var code uint64
	_ = eachField(body, func(n protowire.Number, _ protowire.Type, _ []byte, x uint64) {
		if n == 1 {
			code = x
		}
	})
	if num != 22 || code != uint64(CodeMalformed) {
		t.Errorf("insert_tx of a cut tx: field %d code %d, want 22 and %d", num, code, CodeMalformed)
	}
	num, body = roundTrip(22, protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), 1<<20))
	var txs [][]byte
	_ = eachField(body, func(n protowire.Number, _ protowire.Type, v []byte, _ uint64) {
		if n == 1 {
			txs = append(txs, v)
		}
	})
	if num != 23 || len(txs) != 2 || string(txs[1]) != string(tx0) {
		t.Fatalf("reap_txs: field %d, %d txs; want 23 and the two held (CheckTx's, then InsertTx's)", num, len(txs))
	}
	// The v1 client's connection still works after the raw one.
	if r, err := cli.Query(ctx, &abci.QueryRequest{Path: "/account", Data: addrOf(k)}); err != nil || len(r.Value) != 16 {
		t.Fatalf("query: %v %v", r, err)
	}
}

func addrOf(k ed25519.PrivateKey) []byte {
	a := Address(k.Public().(ed25519.PublicKey))
	return a[:]
}
