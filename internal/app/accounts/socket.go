package accounts

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"strings"
	"sync"

	abci "github.com/cometbft/cometbft/abci/types"
	"google.golang.org/protobuf/encoding/protowire"
)

// The app's ABCI socket server. CometBFT v0.38, v0.40 and v1.0 share the
// socket protocol (length-delimited Request and Response messages, the
// same field numbers), but v0.40 adds two requests v1.0.1's types (and so
// its abci/server) do not know: Request.insert_tx (21) and reap_txs (22),
// answered by Response.insert_tx (22) and reap_txs (23)
// (proto/tendermint/abci/types.proto of v0.40.0). This server decodes
// those two itself and every other request with v1.0.1's types.

// Field numbers of v0.40.0's app-mempool messages.
const (
	reqInsertTx  = 21
	reqReapTxs   = 22
	respInsertTx = 22
	respReapTxs  = 23
)

// maxFrame bounds one request (CometBFT's own bound is 2 GiB; a block of
// the largest max_bytes, 100 MiB, fits).
const maxFrame = 256 << 20

type socketServer struct {
	app *App
	ln  net.Listener
	log io.Writer

	mu    sync.Mutex
	conns map[net.Conn]bool
	wg    sync.WaitGroup
}

// listen opens addr: tcp://HOST:PORT or unix://PATH.
func listen(addr string) (net.Listener, error) {
	proto, a, ok := strings.Cut(addr, "://")
	if !ok || (proto != "tcp" && proto != "unix") {
		return nil, fmt.Errorf("address %q: want tcp://HOST:PORT or unix://PATH", addr)
	}
	if proto == "unix" {
		_ = os.Remove(a) // a stale socket of a killed app
	}
	return net.Listen(proto, a)
}

func newSocketServer(app *App, addr string, log io.Writer) (*socketServer, error) {
	ln, err := listen(addr)
	if err != nil {
		return nil, err
	}
	s := &socketServer{app: app, ln: ln, log: log, conns: map[net.Conn]bool{}}
	s.wg.Add(1)
	go s.accept()
	return s, nil
}

func (s *socketServer) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			return // closed
		}
		s.mu.Lock()
		s.conns[c] = true
		s.mu.Unlock()
		s.wg.Add(1)
		go func() {
			defer s.wg.Done()
			if err := s.serve(c); err != nil && !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				fmt.Fprintf(s.log, "accounts app: connection %s: %v\n", c.RemoteAddr(), err)
			}
			s.mu.Lock()
			delete(s.conns, c)
			s.mu.Unlock()
			_ = c.Close()
		}()
	}
}

// stop closes the listener and every connection and waits for them.
func (s *socketServer) stop() error {
	err := s.ln.Close()
	s.mu.Lock()
	for c := range s.conns {
		_ = c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return err
}

// serve answers one connection's requests in order. The writer is flushed
// whenever no request is waiting in the reader, so pipelined requests
// (CheckTx after CheckTx, then Flush) cost one write.
func (s *socketServer) serve(c net.Conn) error {
	r, w := bufio.NewReader(c), bufio.NewWriter(c)
	for {
		n, err := binary.ReadUvarint(r)
		if err != nil {
			return err
		}
		if n > maxFrame {
			return fmt.Errorf("a request of %d bytes (max %d)", n, maxFrame)
		}
		frame := make([]byte, n)
		if _, err := io.ReadFull(r, frame); err != nil {
			return err
		}
		resp, herr := s.handle(frame)
		if herr != nil {
			// As CometBFT's server: an exception back, then the
			// connection closes (the node halts on it).
			resp, _ = abci.ToExceptionResponse(herr.Error()).Marshal()
		}
		if _, err := w.Write(binary.AppendUvarint(nil, uint64(len(resp)))); err != nil {
			return err
		}
		if _, err := w.Write(resp); err != nil {
			return err
		}
		if herr != nil {
			_ = w.Flush()
			return herr
		}
		if r.Buffered() == 0 {
			if err := w.Flush(); err != nil {
				return err
			}
		}
	}
}

// handle answers one request frame with a response frame.
func (s *socketServer) handle(frame []byte) ([]byte, error) {
	num, typ, n := protowire.ConsumeTag(frame)
	if n < 0 {
		return nil, fmt.Errorf("a malformed request: %w", protowire.ParseError(n))
	}
	if typ == protowire.BytesType && (num == reqInsertTx || num == reqReapTxs) {
		body, m := protowire.ConsumeBytes(frame[n:])
		if m < 0 {
			return nil, fmt.Errorf("a malformed request: %w", protowire.ParseError(m))
		}
		if num == reqInsertTx {
			return s.insertTx(body)
		}
		return s.reapTxs(body)
	}
	req := &abci.Request{}
	if err := req.Unmarshal(frame); err != nil {
		return nil, fmt.Errorf("decode a request: %w", err)
	}
	resp, err := dispatch(s.app, req)
	if err != nil {
		return nil, err
	}
	return resp.Marshal()
}

// insertTx: RequestInsertTx{bytes tx = 1} → ResponseInsertTx{uint32 code = 1}.
func (s *socketServer) insertTx(body []byte) ([]byte, error) {
	var tx []byte
	if err := eachField(body, func(num protowire.Number, typ protowire.Type, v []byte, _ uint64) {
		if num == 1 && typ == protowire.BytesType {
			tx = v
		}
	}); err != nil {
		return nil, fmt.Errorf("insert_tx: %w", err)
	}
	code, err := s.app.InsertTx(tx)
	if err != nil {
		return nil, err
	}
	var msg []byte
	if code != 0 {
		msg = protowire.AppendVarint(protowire.AppendTag(nil, 1, protowire.VarintType), uint64(code))
	}
	return wrap(respInsertTx, msg), nil
}

// reapTxs: RequestReapTxs{uint64 max_bytes = 1, uint64 max_gas = 2} →
// ResponseReapTxs{repeated bytes txs = 1}. The app's txs have no gas.
func (s *socketServer) reapTxs(body []byte) ([]byte, error) {
	var maxBytes uint64
	if err := eachField(body, func(num protowire.Number, typ protowire.Type, _ []byte, x uint64) {
		if num == 1 && typ == protowire.VarintType {
			maxBytes = x
		}
	}); err != nil {
		return nil, fmt.Errorf("reap_txs: %w", err)
	}
	txs, err := s.app.ReapTxs(maxBytes)
	if err != nil {
		return nil, err
	}
	var msg []byte
	for _, tx := range txs {
		msg = protowire.AppendBytes(protowire.AppendTag(msg, 1, protowire.BytesType), tx)
	}
	return wrap(respReapTxs, msg), nil
}

// wrap is a Response with msg as its oneof field num.
func wrap(num protowire.Number, msg []byte) []byte {
	b := protowire.AppendTag(nil, num, protowire.BytesType)
	return protowire.AppendBytes(b, msg)
}

// eachField calls f with every field of a message: bytes fields' value,
// varint fields' number.
func eachField(b []byte, f func(num protowire.Number, typ protowire.Type, v []byte, x uint64)) error {
	for len(b) > 0 {
		num, typ, n := protowire.ConsumeTag(b)
		if n < 0 {
			return protowire.ParseError(n)
		}
		b = b[n:]
		switch typ {
		case protowire.BytesType:
			v, m := protowire.ConsumeBytes(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			f(num, typ, v, 0)
			b = b[m:]
		case protowire.VarintType:
			x, m := protowire.ConsumeVarint(b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			f(num, typ, nil, x)
			b = b[m:]
		default:
			m := protowire.ConsumeFieldValue(num, typ, b)
			if m < 0 {
				return protowire.ParseError(m)
			}
			b = b[m:]
		}
	}
	return nil
}

// dispatch calls the app for a request v1.0.1's types know, as
// abci/server's SocketServer.handleRequest does.
func dispatch(app *App, req *abci.Request) (*abci.Response, error) {
	ctx := context.Background()
	switch r := req.Value.(type) {
	case *abci.Request_Echo:
		return abci.ToEchoResponse(r.Echo.Message), nil
	case *abci.Request_Flush:
		return abci.ToFlushResponse(), nil
	case *abci.Request_Info:
		return respond(app.Info(ctx, r.Info))(abci.ToInfoResponse)
	case *abci.Request_CheckTx:
		return respond(app.CheckTx(ctx, r.CheckTx))(abci.ToCheckTxResponse)
	case *abci.Request_Commit:
		return respond(app.Commit(ctx, r.Commit))(abci.ToCommitResponse)
	case *abci.Request_Query:
		return respond(app.Query(ctx, r.Query))(abci.ToQueryResponse)
	case *abci.Request_InitChain:
		return respond(app.InitChain(ctx, r.InitChain))(abci.ToInitChainResponse)
	case *abci.Request_FinalizeBlock:
		return respond(app.FinalizeBlock(ctx, r.FinalizeBlock))(abci.ToFinalizeBlockResponse)
	case *abci.Request_ListSnapshots:
		return respond(app.ListSnapshots(ctx, r.ListSnapshots))(abci.ToListSnapshotsResponse)
	case *abci.Request_OfferSnapshot:
		return respond(app.OfferSnapshot(ctx, r.OfferSnapshot))(abci.ToOfferSnapshotResponse)
	case *abci.Request_LoadSnapshotChunk:
		return respond(app.LoadSnapshotChunk(ctx, r.LoadSnapshotChunk))(abci.ToLoadSnapshotChunkResponse)
	case *abci.Request_ApplySnapshotChunk:
		return respond(app.ApplySnapshotChunk(ctx, r.ApplySnapshotChunk))(abci.ToApplySnapshotChunkResponse)
	case *abci.Request_PrepareProposal:
		return respond(app.PrepareProposal(ctx, r.PrepareProposal))(abci.ToPrepareProposalResponse)
	case *abci.Request_ProcessProposal:
		return respond(app.ProcessProposal(ctx, r.ProcessProposal))(abci.ToProcessProposalResponse)
	case *abci.Request_ExtendVote:
		return respond(app.ExtendVote(ctx, r.ExtendVote))(abci.ToExtendVoteResponse)
	case *abci.Request_VerifyVoteExtension:
		return respond(app.VerifyVoteExtension(ctx, r.VerifyVoteExtension))(abci.ToVerifyVoteExtensionResponse)
	}
	return nil, fmt.Errorf("unknown request %T", req.Value)
}

// respond wraps an app method's result in a Response with to.
func respond[T any](res T, err error) func(to func(T) *abci.Response) (*abci.Response, error) {
	return func(to func(T) *abci.Response) (*abci.Response, error) {
		if err != nil {
			return nil, err
		}
		return to(res), nil
	}
}
