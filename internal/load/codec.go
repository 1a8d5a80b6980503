package load

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/benchnet/benchnet/internal/manifest"
)

// Codec builds the bytes of one tx. Every tx it returns is exactly Size()
// bytes long and differs from every other tx of the run (so CometBFT's
// mempool cache never rejects one as a duplicate).
type Codec interface {
	Encode(seq uint64, now time.Time) []byte
	Size() int
}

// appendEncoder is a Codec that can build a tx into a buffer the caller
// reuses, so the generator's send path does not allocate a tx per send.
type appendEncoder interface {
	AppendEncode(b []byte, seq uint64, now time.Time) []byte
}

// NewCodec returns the codec of cfg.Format ("kv" or "loadtime") for
// cfg.Size-byte txs, or an error naming the minimum size when cfg.Size is
// too small for the payload.
func NewCodec(cfg Config) (Codec, error) {
	if cfg.Workload == manifest.WorkloadAccounts {
		return newAccountsCodec(cfg) // signs every tx: call before the load starts
	}
	switch cfg.Format {
	case "", "kv":
		return newKV(cfg)
	case "loadtime":
		return newLoadtime(cfg)
	default:
		return nil, fmt.Errorf("payload format %q: want kv or loadtime", cfg.Format)
	}
}

// RunTag is the 8 hex digits that identify a run inside its txs: the first 4
// bytes of SHA-256(runID). A loadtime tx's 16-byte id is the first 16 bytes
// of the same hash, so its hex starts with the same tag.
func RunTag(runID string) string {
	h := sha256.Sum256([]byte(runID))
	return hex.EncodeToString(h[:4])
}

// RunUUID is the 16-byte run id written into loadtime payloads.
func RunUUID(runID string) [16]byte {
	h := sha256.Sum256([]byte(runID))
	return [16]byte(h[:16])
}

// Payload is what Decode recovers from a tx.
type Payload struct {
	Format string    // "kv" or "loadtime"
	Run    string    // RunTag of the run that sent it
	Seq    uint64    // sequence number (loadtime: only when the padding holds it)
	Sent   time.Time // send time written into the tx
	// Loadtime fields.
	Connections, Rate, Size uint64
	ID                      []byte
}

// Decode recovers run, sequence and send time from a kv or loadtime tx.
func Decode(tx []byte) (Payload, error) {
	if bytes.HasPrefix(tx, []byte("a=")) {
		return decodeLoadtime(tx)
	}
	return decodeKV(tx)
}

// --- kv ---------------------------------------------------------------------

// The kv payload is valid for CometBFT's kvstore (exactly one '=', no ':',
// neither end is '='), printable and greppable:
//
//	unique keys: bn<tag>.<seq>=<sent>.<padding>   (one key per tx)
//	fixed key:   bn<tag>=<seq>.<sent>.<padding>   (every tx writes key bn<tag>)
//
// <tag> is RunTag (8 hex), <seq> and <sent> (unix ns) are 16 hex digits,
// padding is 'x' up to the exact size. Both layouts carry the same fields, so
// Decode handles them alike.
const (
	kvHeader  = 2 + 8 + 1 + 16 + 1 + 16 + 1
	kvPadByte = 'x'
)

// KVMinSize is the smallest kv tx: the header with no padding.
const KVMinSize = kvHeader

type kvCodec struct {
	tag   string
	size  int
	fixed bool
}

func newKV(cfg Config) (*kvCodec, error) {
	if cfg.Size < KVMinSize {
		return nil, fmt.Errorf("tx size %d is too small for the kv payload: minimum is %d bytes", cfg.Size, KVMinSize)
	}
	switch cfg.Keys {
	case "", "unique", "fixed":
	default:
		return nil, fmt.Errorf("keys %q: want unique or fixed", cfg.Keys)
	}
	return &kvCodec{tag: RunTag(cfg.RunID), size: cfg.Size, fixed: cfg.Keys == "fixed"}, nil
}

func (c *kvCodec) Size() int { return c.size }

func (c *kvCodec) Encode(seq uint64, now time.Time) []byte {
	return c.AppendEncode(make([]byte, 0, c.size), seq, now)
}

// AppendEncode appends the tx to b (see appendEncoder).
func (c *kvCodec) AppendEncode(b []byte, seq uint64, now time.Time) []byte {
	start := len(b)
	b = append(b, "bn"...)
	b = append(b, c.tag...)
	if c.fixed {
		b = append(b, '=')
	} else {
		b = append(b, '.')
	}
	b = appendHex16(b, seq)
	if c.fixed {
		b = append(b, '.')
	} else {
		b = append(b, '=')
	}
	b = appendHex16(b, uint64(now.UnixNano()))
	b = append(b, '.')
	for len(b) < start+c.size {
		b = append(b, kvPadByte)
	}
	return b
}

func appendHex16(b []byte, v uint64) []byte {
	var buf [8]byte
	binary.BigEndian.PutUint64(buf[:], v)
	return hex.AppendEncode(b, buf[:])
}

func decodeKV(tx []byte) (Payload, error) {
	p := Payload{Format: "kv"}
	if len(tx) < kvHeader || !bytes.HasPrefix(tx, []byte("bn")) {
		return p, errors.New("not a benchnet kv tx")
	}
	if bytes.Count(tx, []byte("=")) != 1 {
		return p, errors.New("kv tx must hold exactly one '='")
	}
	h := tx[:kvHeader]
	for _, i := range []int{10, 27} {
		if h[i] != '.' && h[i] != '=' {
			return p, fmt.Errorf("kv tx: separator at %d is %q", i, h[i])
		}
	}
	if h[kvHeader-1] != '.' {
		return p, errors.New("kv tx: header not terminated by '.'")
	}
	p.Run = string(h[2:10])
	seq, err := strconv.ParseUint(string(h[11:27]), 16, 64)
	if err != nil {
		return p, fmt.Errorf("kv tx: sequence: %w", err)
	}
	ns, err := strconv.ParseUint(string(h[28:44]), 16, 64)
	if err != nil {
		return p, fmt.Errorf("kv tx: send time: %w", err)
	}
	p.Seq, p.Sent = seq, time.Unix(0, int64(ns))
	return p, nil
}

// --- loadtime ---------------------------------------------------------------

// The loadtime payload is CometBFT's test/loadtime one, so its `report` tool
// reads our blocks: "a=" + hex(proto Payload{connections=1, rate=2, size=3,
// time=4 (google.protobuf.Timestamp), id=5 (16 bytes), padding=6}).
//
// CometBFT's generator pads to roughly Size (hex halves the padding and the
// padding's length prefix grows, so its txs come out 2–3 bytes short). Ours
// are exact: the padding length is solved per tx (the timestamp's nanos
// varint varies in length), and when no single field-6 entry fits (a
// length-prefix boundary) an empty field-6 entry precedes the real one;
// protobuf keeps the last value of a non-repeated field, so decoders see the
// same payload. Hex makes every tx an even number of bytes, so Size must be
// even. The first 8 bytes of padding hold the sequence number (big endian),
// which also keeps two txs built in the same nanosecond distinct.
type loadtimeCodec struct {
	size  int
	conns uint64
	rate  uint64
	psize uint64
	id    [16]byte
}

// LoadtimeMinSize is the smallest loadtime tx for cfg: the payload with the
// longest timestamp encoding and an empty padding field.
// The payload's size field is part of the payload, so the minimum is the
// fixed point of minimum(size) (cfg.Size itself is ignored).
func LoadtimeMinSize(cfg Config) int {
	c := loadtimeFor(cfg)
	minFor := func(size int) int {
		c.psize = uint64(size)
		return 2 + 2*(c.baseLen(math.MaxUint32, 999_999_999)+2)
	}
	m := minFor(1)
	for minFor(m) > m {
		m = minFor(m)
	}
	return m
}

func loadtimeFor(cfg Config) *loadtimeCodec {
	return &loadtimeCodec{
		size:  cfg.Size,
		conns: uint64(max(cfg.Connections, 0)),
		rate:  uint64(math.Round(max(cfg.Rate, 0))),
		psize: uint64(max(cfg.Size, 0)),
		id:    RunUUID(cfg.RunID),
	}
}

func newLoadtime(cfg Config) (*loadtimeCodec, error) {
	c := loadtimeFor(cfg)
	if min := LoadtimeMinSize(cfg); cfg.Size < min {
		return nil, fmt.Errorf("tx size %d is too small for the loadtime payload: minimum is %d bytes", cfg.Size, min)
	}
	if cfg.Size%2 != 0 {
		return nil, fmt.Errorf("tx size %d: loadtime txs are \"a=\" + hex, so the size must be even", cfg.Size)
	}
	return c, nil
}

func (c *loadtimeCodec) Size() int { return c.size }

func varField(num protowire.Number, v uint64) int {
	if v == 0 { // proto3 omits zero scalars
		return 0
	}
	return protowire.SizeTag(num) + protowire.SizeVarint(v)
}

func tsLen(sec int64, nanos int32) int {
	return varField(1, uint64(sec)) + varField(2, uint64(nanos))
}

// baseLen is the encoded payload without field 6.
func (c *loadtimeCodec) baseLen(sec int64, nanos int32) int {
	ts := tsLen(sec, nanos)
	return varField(1, c.conns) + varField(2, c.rate) + varField(3, c.psize) +
		protowire.SizeTag(4) + protowire.SizeBytes(ts) +
		protowire.SizeTag(5) + protowire.SizeBytes(len(c.id))
}

// padFit returns n such that a field-6 entry with n bytes is exactly s bytes
// long, or false when s falls on a length-prefix boundary.
func padFit(s int) (int, bool) {
	for vl := 1; vl <= 5; vl++ {
		n := s - 1 - vl
		if n >= 0 && protowire.SizeVarint(uint64(n)) == vl {
			return n, true
		}
	}
	return 0, false
}

func (c *loadtimeCodec) Encode(seq uint64, now time.Time) []byte {
	sec, nanos := now.Unix(), int32(now.Nanosecond())
	pbLen := (c.size - 2) / 2
	s := pbLen - c.baseLen(sec, nanos) // bytes left for field-6 entries, >= 2
	pb := make([]byte, 0, pbLen)
	pb = appendVarField(pb, 1, c.conns)
	pb = appendVarField(pb, 2, c.rate)
	pb = appendVarField(pb, 3, c.psize)
	pb = protowire.AppendTag(pb, 4, protowire.BytesType)
	pb = protowire.AppendVarint(pb, uint64(tsLen(sec, nanos)))
	pb = appendVarField(pb, 1, uint64(sec))
	pb = appendVarField(pb, 2, uint64(nanos))
	pb = protowire.AppendTag(pb, 5, protowire.BytesType)
	pb = protowire.AppendBytes(pb, c.id[:])
	n, ok := padFit(s)
	if !ok { // boundary: an empty entry first, then the real one
		pb = protowire.AppendTag(pb, 6, protowire.BytesType)
		pb = protowire.AppendVarint(pb, 0)
		n, _ = padFit(s - 2)
	}
	pad := make([]byte, n)
	var sb [8]byte
	binary.BigEndian.PutUint64(sb[:], seq)
	copy(pad, sb[:])
	pb = protowire.AppendTag(pb, 6, protowire.BytesType)
	pb = protowire.AppendBytes(pb, pad)
	out := make([]byte, 2, c.size)
	copy(out, "a=")
	return hex.AppendEncode(out, pb)
}

func appendVarField(b []byte, num protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, num, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func decodeLoadtime(tx []byte) (Payload, error) {
	p := Payload{Format: "loadtime"}
	pb, err := hex.DecodeString(string(tx[2:]))
	if err != nil {
		return p, fmt.Errorf("loadtime tx: %w", err)
	}
	var sec, nanos uint64
	var pad []byte
	for len(pb) > 0 {
		num, typ, n := protowire.ConsumeTag(pb)
		if n < 0 {
			return p, fmt.Errorf("loadtime tx: %w", protowire.ParseError(n))
		}
		pb = pb[n:]
		var v uint64
		var b []byte
		switch typ {
		case protowire.VarintType:
			v, n = protowire.ConsumeVarint(pb)
		case protowire.BytesType:
			b, n = protowire.ConsumeBytes(pb)
		default:
			n = protowire.ConsumeFieldValue(num, typ, pb)
		}
		if n < 0 {
			return p, fmt.Errorf("loadtime tx: field %d: %w", num, protowire.ParseError(n))
		}
		pb = pb[n:]
		switch num {
		case 1:
			p.Connections = v
		case 2:
			p.Rate = v
		case 3:
			p.Size = v
		case 4:
			for len(b) > 0 {
				tn, _, m := protowire.ConsumeTag(b)
				if m < 0 {
					return p, fmt.Errorf("loadtime tx: timestamp: %w", protowire.ParseError(m))
				}
				tv, k := protowire.ConsumeVarint(b[m:])
				if k < 0 {
					return p, fmt.Errorf("loadtime tx: timestamp: %w", protowire.ParseError(k))
				}
				if tn == 1 {
					sec = tv
				} else if tn == 2 {
					nanos = tv
				}
				b = b[m+k:]
			}
		case 5:
			p.ID = append([]byte(nil), b...)
		case 6:
			pad = b // last entry wins, as in protobuf
		}
	}
	if len(p.ID) != 16 {
		return p, fmt.Errorf("loadtime tx: id is %d bytes, want 16", len(p.ID))
	}
	p.Run = hex.EncodeToString(p.ID[:4])
	p.Sent = time.Unix(int64(sec), int64(nanos))
	if len(pad) >= 8 {
		p.Seq = binary.BigEndian.Uint64(pad[:8])
	}
	return p, nil
}
