package load

import (
	"encoding/json"
	"testing"

	"github.com/benchnet/benchnet/internal/rundir"
)

// TestFastAccepted checks that the reflection-free path takes only answers
// json.Unmarshal reads as accepted with an empty log, with the same seq.
func TestFastAccepted(t *testing.T) {
	cases := []struct {
		msg  string
		fast bool
		seq  uint64
	}{
		{`{"jsonrpc":"2.0","id":1,"result":{"code":0,"data":"","log":"","codespace":"","hash":"AB"}}`, true, 0},
		{`{"jsonrpc":"2.0","id":12345,"result":{"code":0,"data":"","log":"","codespace":"","hash":"AB"}}`, true, 12344},
		{`{"jsonrpc":"2.0","id":7,"result":{"code":3,"data":"","log":"bad","codespace":"","hash":"AB"}}`, false, 0},
		{`{"jsonrpc":"2.0","id":7,"result":{"code":0,"data":"","log":"note","codespace":"","hash":"AB"}}`, false, 0},
		{`{"jsonrpc":"2.0","id":7,"error":{"code":-32603,"message":"Internal error","data":"mempool is full"}}`, false, 0},
		{`{"jsonrpc":"2.0","id":"7","result":{"code":0,"data":"","log":"","codespace":"","hash":"AB"}}`, false, 0},
		{`{"jsonrpc":"2.0","id":0,"result":{"code":0,"data":"","log":"","codespace":"","hash":"AB"}}`, false, 0},
		{`{"jsonrpc":"2.0","id":07,"result":{"code":0,"data":"","log":"","codespace":"","hash":"AB"}}`, false, 0},
		{`{"jsonrpc":"2.0","id":7,"result":{"code":0,"code":5,"log":""}}`, false, 0},
		{`{"jsonrpc":"2.0","id":7,"result":{"code":0,"log":"","log":""}}`, false, 0},
		{`{"jsonrpc":"2.0","id":7,"result":{"code":0,"data":"","log":"","error":"x"}}`, false, 0},
		{`{"jsonrpc":"2.0","id":7,"result":{"code":0`, false, 0},
		{`{"jsonrpc":"2.0","id":99999999999999999999,"result":{"code":0,"log":""}}`, false, 0},
	}
	for _, c := range cases {
		seq, ok := fastAccepted([]byte(c.msg))
		if ok != c.fast || seq != c.seq {
			t.Errorf("%s: fast %v seq %d, want %v %d", c.msg, ok, seq, c.fast, c.seq)
			continue
		}
		if !ok {
			continue
		}
		var r rpcResponse
		if err := json.Unmarshal([]byte(c.msg), &r); err != nil {
			t.Fatalf("%s: %v", c.msg, err)
		}
		js, jok := r.seq()
		res, code, log := r.outcome()
		if !jok || js != seq || res != rundir.ResultOK || code != 0 || log != "" {
			t.Errorf("%s: json path says seq %d (%v) %s %d %q, fast path accepted seq %d", c.msg, js, jok, res, code, log, seq)
		}
	}
}
