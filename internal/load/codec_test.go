package load

import (
	"bytes"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/benchnet/benchnet/internal/testenv"
)

// kvstoreValid is CometBFT kvstore's CheckTx rule: exactly one '=' and no
// ':' (or one ':' and no '='), and the separator at neither end.
func kvstoreValid(tx []byte) bool {
	eq, col := bytes.Count(tx, []byte("=")), bytes.Count(tx, []byte(":"))
	var sep byte
	switch {
	case eq == 1 && col == 0:
		sep = '='
	case col == 1 && eq == 0:
		sep = ':'
	default:
		return false
	}
	return tx[0] != sep && tx[len(tx)-1] != sep
}

func TestKVCodec(t *testing.T) {
	now := time.Unix(1_700_000_000, 123_456_789)
	for _, keys := range []string{"unique", "fixed"} {
		for size := KVMinSize; size <= 5000; size += 7 {
			c, err := NewCodec(Config{RunID: "r1", Size: size, Format: "kv", Keys: keys})
			if err != nil {
				t.Fatal(err)
			}
			tx := c.Encode(uint64(size)*977, now)
			if len(tx) != size {
				t.Fatalf("%s size %d: got %d bytes", keys, size, len(tx))
			}
			if !kvstoreValid(tx) {
				t.Fatalf("%s size %d: not a valid kvstore tx: %q", keys, size, tx)
			}
			p, err := Decode(tx)
			if err != nil {
				t.Fatalf("decode %q: %v", tx, err)
			}
			if p.Run != RunTag("r1") || p.Seq != uint64(size)*977 || !p.Sent.Equal(now) || p.Format != "kv" {
				t.Fatalf("decode %q = %+v", tx, p)
			}
			// Built into a reused buffer with something before it: the
			// same bytes after the prefix, the prefix untouched.
			buf := append(make([]byte, 0, 8), "prefix"...)
			app := c.(appendEncoder).AppendEncode(buf, uint64(size)*977, now)
			if string(app[:6]) != "prefix" || !bytes.Equal(app[6:], tx) {
				t.Fatalf("%s size %d: AppendEncode differs from Encode: %q", keys, size, app)
			}
		}
	}
}

func TestKVKeys(t *testing.T) {
	for _, tc := range []struct {
		keys    string
		sameKey bool
	}{
		{"unique", false},
		{"fixed", true},
	} {
		t.Run(tc.keys, func(t *testing.T) {
			c, err := NewCodec(Config{RunID: "run", Size: 100, Keys: tc.keys})
			if err != nil {
				t.Fatal(err)
			}
			now := time.Unix(1_700_000_000, 0) // same send time: only seq differs
			txa, txb := c.Encode(1, now), c.Encode(2, now)
			a := bytes.SplitN(txa, []byte("="), 2)
			b := bytes.SplitN(txb, []byte("="), 2)
			if got := bytes.Equal(a[0], b[0]); got != tc.sameKey {
				t.Fatalf("keys %q and %q: equal=%v, want %v", a[0], b[0], got, tc.sameKey)
			}
			if bytes.Equal(txa, txb) {
				t.Fatalf("two txs are identical: %q", txa)
			}
			if tc.sameKey && bytes.Equal(a[1], b[1]) {
				t.Fatalf("fixed key: values must still differ: %q", a[1])
			}
		})
	}
}

func TestMinSizeErrors(t *testing.T) {
	lt := Config{RunID: "r", Format: "loadtime", Connections: 1, Rate: 1000, Size: 1024}
	ltMin := LoadtimeMinSize(lt)
	for _, tc := range []struct {
		cfg  Config
		want string
	}{
		{Config{Format: "kv", Size: KVMinSize - 1}, fmt.Sprintf("minimum is %d bytes", KVMinSize)},
		{Config{Format: "loadtime", Connections: 1, Rate: 1000, Size: ltMin - 2}, fmt.Sprintf("minimum is %d bytes", ltMin)},
		{Config{Format: "loadtime", Connections: 1, Rate: 1000, Size: 1025}, "must be even"},
		{Config{Format: "json", Size: 1000}, `format "json"`},
	} {
		_, err := NewCodec(tc.cfg)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("NewCodec(%+v) = %v, want error containing %q", tc.cfg, err, tc.want)
		}
	}
	if _, err := NewCodec(Config{Format: "kv", Size: KVMinSize}); err != nil {
		t.Errorf("kv at its minimum: %v", err)
	}
	if _, err := NewCodec(Config{Format: "loadtime", Connections: 1, Rate: 1000, Size: ltMin}); err != nil {
		t.Errorf("loadtime at its minimum: %v", err)
	}
}

// payloadType builds CometBFT's loadtime.payload.Payload message (from
// test/loadtime/payload/payload.proto) at run time, so the real protobuf
// library, not our own decoder, checks the bytes.
func payloadType(t *testing.T) protoreflect.MessageType {
	t.Helper()
	opt := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum()
	field := func(name string, num int32, typ descriptorpb.FieldDescriptorProto_Type, msg string) *descriptorpb.FieldDescriptorProto {
		f := &descriptorpb.FieldDescriptorProto{Name: proto.String(name), Number: proto.Int32(num), Label: opt, Type: typ.Enum(), JsonName: proto.String(name)}
		if msg != "" {
			f.TypeName = proto.String(msg)
		}
		return f
	}
	u64, byt := descriptorpb.FieldDescriptorProto_TYPE_UINT64, descriptorpb.FieldDescriptorProto_TYPE_BYTES
	fd := &descriptorpb.FileDescriptorProto{
		Name: proto.String("payload.proto"), Package: proto.String("loadtime.payload"), Syntax: proto.String("proto3"),
		Dependency: []string{"google/protobuf/timestamp.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{
			Name: proto.String("Payload"),
			Field: []*descriptorpb.FieldDescriptorProto{
				field("connections", 1, u64, ""), field("rate", 2, u64, ""), field("size", 3, u64, ""),
				field("time", 4, descriptorpb.FieldDescriptorProto_TYPE_MESSAGE, ".google.protobuf.Timestamp"),
				field("id", 5, byt, ""), field("padding", 6, byt, ""),
			},
		}},
	}
	_ = timestamppb.Now() // registers timestamp.proto in the global registry
	file, err := protodesc.NewFile(fd, protoregistryFiles())
	if err != nil {
		t.Fatal(err)
	}
	return dynamicpb.NewMessageType(file.Messages().ByName("Payload"))
}

func TestLoadtimeCodec(t *testing.T) {
	mt := payloadType(t)
	fields := mt.Descriptor().Fields()
	cfg := Config{RunID: "qa-run", Format: "loadtime", Connections: 2, Rate: 500}
	id := RunUUID("qa-run")
	min := LoadtimeMinSize(cfg)
	// Every even size from the minimum up past both length-prefix
	// boundaries of the padding (127/128 and 16383/16384 bytes), with
	// nanos of every varint length.
	var sizes []int
	for s := min; s <= 600; s += 2 {
		sizes = append(sizes, s)
	}
	for s := 32700; s <= 32900; s += 2 {
		sizes = append(sizes, s)
	}
	nanos := []int{0, 1, 200, 40_000, 5_000_000, 999_999_999}
	for _, size := range sizes {
		cfg.Size = size
		c, err := NewCodec(cfg)
		if err != nil {
			t.Fatal(err)
		}
		for k, ns := range nanos {
			now := time.Unix(1_700_000_000, int64(ns))
			seq := uint64(size*10 + k)
			tx := c.Encode(seq, now)
			if len(tx) != size {
				t.Fatalf("size %d nanos %d: got %d bytes", size, ns, len(tx))
			}
			if !kvstoreValid(tx) || !bytes.HasPrefix(tx, []byte("a=")) {
				t.Fatalf("size %d: not a kvstore tx with key a: %.40q", size, tx)
			}
			pb, err := hex.DecodeString(string(tx[2:]))
			if err != nil {
				t.Fatal(err)
			}
			m := mt.New()
			if err := proto.Unmarshal(pb, m.Interface()); err != nil {
				t.Fatalf("size %d: protobuf rejects the payload: %v", size, err)
			}
			ts := m.Get(fields.ByName("time")).Message().Interface()
			var got timestamppb.Timestamp
			b, _ := proto.Marshal(ts)
			if err := proto.Unmarshal(b, &got); err != nil {
				t.Fatal(err)
			}
			if !got.AsTime().Equal(now) ||
				m.Get(fields.ByName("connections")).Uint() != 2 ||
				m.Get(fields.ByName("rate")).Uint() != 500 ||
				m.Get(fields.ByName("size")).Uint() != uint64(size) ||
				!bytes.Equal(m.Get(fields.ByName("id")).Bytes(), id[:]) {
				t.Fatalf("size %d nanos %d: protobuf decodes %v", size, ns, m)
			}
			p, err := Decode(tx)
			if err != nil {
				t.Fatal(err)
			}
			if p.Run != RunTag("qa-run") || !p.Sent.Equal(now) || p.Size != uint64(size) {
				t.Fatalf("Decode = %+v", p)
			}
			if pad := m.Get(fields.ByName("padding")).Bytes(); len(pad) >= 8 && p.Seq != seq {
				t.Fatalf("size %d: seq %d decoded as %d", size, seq, p.Seq)
			}
		}
	}
}

// The golden file pins the exact bytes of each format, so a change of the
// wire format (which other tools parse) is a visible diff.
func TestGoldenTxs(t *testing.T) {
	now := time.Unix(1_700_000_000, 987_654_321)
	var out bytes.Buffer
	for _, cfg := range []Config{
		{RunID: "golden", Size: 64, Format: "kv", Keys: "unique"},
		{RunID: "golden", Size: 64, Format: "kv", Keys: "fixed"},
		{RunID: "golden", Size: 200, Format: "loadtime", Connections: 1, Rate: 1000},
	} {
		c, err := NewCodec(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&out, "%s/%s/%d: %s\n", cfg.Format, cfg.Keys, cfg.Size, c.Encode(42, now))
	}
	path := filepath.Join("testdata", "txs.golden")
	testenv.Golden(t, path, out.Bytes())
}

func protoregistryFiles() *protoregistry.Files { return protoregistry.GlobalFiles }
