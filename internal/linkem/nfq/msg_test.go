package nfq

import (
	"bytes"
	"encoding/binary"
	"errors"
	"net/netip"
	"testing"
	"time"
)

// The expected bytes are the kernel's structs laid out by hand (netlink
// headers in host order, which these tests take to be little-endian; NFQ
// payloads big-endian).
func littleEndian(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("expected bytes are written for a little-endian host")
	}
}

func TestEncode(t *testing.T) {
	littleEndian(t)
	for _, tc := range []struct {
		name string
		got  []byte
		want []byte
	}{
		{"verdict accept", AppendVerdict(nil, 5, 0x01020304, Accept), []byte{
			32, 0, 0, 0, 1, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, // nlmsghdr: len, NFNL_SUBSYS_QUEUE<<8|VERDICT, NLM_F_REQUEST, seq, pid
			0, 0, 0, 5, // nfgenmsg: AF_UNSPEC, v0, res_id 5 (big-endian)
			12, 0, 2, 0, 0, 0, 0, 1, 1, 2, 3, 4, // NFQA_VERDICT_HDR: NF_ACCEPT, id
		}},
		{"verdict drop", AppendVerdict(nil, 0x0102, 7, Drop), []byte{
			32, 0, 0, 0, 1, 3, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			0, 0, 1, 2,
			12, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0, 7,
		}},
		{"bind", AppendConfigCmd(nil, 1, 7, CmdBind), []byte{
			28, 0, 0, 0, 2, 3, 5, 0, 1, 0, 0, 0, 0, 0, 0, 0, // CONFIG, REQUEST|ACK, seq 1
			0, 0, 0, 7,
			8, 0, 1, 0, 1, 0, 0, 0, // NFQA_CFG_CMD: BIND, pad, pf 0
		}},
		{"params", AppendConfigParams(nil, 2, 0, CopyPacket, 128, 65536, FlagGSO, FlagGSO), []byte{
			56, 0, 0, 0, 2, 3, 5, 0, 2, 0, 0, 0, 0, 0, 0, 0,
			0, 0, 0, 0,
			9, 0, 2, 0, 0, 0, 0, 128, 2, 0, 0, 0, // NFQA_CFG_PARAMS: range 128, COPY_PACKET, padded
			8, 0, 3, 0, 0, 1, 0, 0, // NFQA_CFG_QUEUE_MAXLEN 65536
			8, 0, 5, 0, 0, 0, 0, 4, // NFQA_CFG_FLAGS GSO
			8, 0, 4, 0, 0, 0, 0, 4, // NFQA_CFG_MASK GSO
		}},
		{"params, kernel defaults", AppendConfigParams(nil, 3, 1, CopyMeta, 0, 0, 0, 0), []byte{
			32, 0, 0, 0, 2, 3, 5, 0, 3, 0, 0, 0, 0, 0, 0, 0,
			0, 0, 0, 1,
			9, 0, 2, 0, 0, 0, 0, 0, 1, 0, 0, 0,
		}},
		{"two verdicts in one datagram", AppendVerdict(AppendVerdict(nil, 0, 1, Accept), 0, 2, Accept)[VerdictLen:], AppendVerdict(nil, 0, 2, Accept)},
	} {
		if !bytes.Equal(tc.got, tc.want) {
			t.Errorf("%s:\n got % x\nwant % x", tc.name, tc.got, tc.want)
		}
	}
	if n := len(AppendVerdict(nil, 0, 1, Accept)); n != VerdictLen {
		t.Errorf("verdict of %d bytes, VerdictLen %d", n, VerdictLen)
	}
}

// packetMsg builds an NFQNL_MSG_PACKET as the kernel sends it.
func packetMsg(queue uint16, id uint32, payload []byte, capLen int, extra ...[]byte) []byte {
	b := appendHdr(nil, msgPacket, 0, 0, queue)
	hdr := binary.BigEndian.AppendUint32(nil, id)
	hdr = binary.BigEndian.AppendUint16(hdr, 0x0800)
	hdr = append(hdr, 3) // NF_INET_LOCAL_OUT
	b = appendAttr(b, attrPacketHdr, hdr)
	for _, e := range extra {
		b = append(b, e...)
	}
	if capLen > 0 {
		b = appendAttr(b, attrCapLen, be32(uint32(capLen)))
	}
	if payload != nil {
		b = appendAttr(b, attrPayload, payload)
	}
	return finish(b, 0)
}

func errMsg(seq uint32, errno int32) []byte {
	b := ne.AppendUint32(nil, 0)
	b = ne.AppendUint16(b, nlmsgError)
	b = ne.AppendUint16(b, 0)
	b = ne.AppendUint32(b, seq)
	b = ne.AppendUint32(b, 0)
	b = ne.AppendUint32(b, uint32(errno))                                 // the kernel sends -errno
	b = append(b, AppendConfigCmd(nil, seq, 0, CmdBind)[:nlmsgHdrLen]...) // the request's header
	return finish(b, 0)
}

func TestParseMessages(t *testing.T) {
	ipv4 := make([]byte, 20)
	ipv4[0] = 0x45
	copy(ipv4[16:], []byte{10, 1, 2, 3})
	odd := []byte{0x45, 1, 2} // 3 bytes: padded to 4
	type msg struct {
		id      uint32
		queue   uint16
		n       int
		payload []byte
		ack     bool
		errno   int32
		seq     uint32
		ignored uint16
	}
	mark := appendAttr(nil, 3, be32(9)) // NFQA_MARK: skipped
	noop := finish(append(ne.AppendUint32(nil, 0), 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0), 0)
	for _, tc := range []struct {
		name    string
		in      []byte
		want    []msg
		wantErr error
	}{
		{"packet", packetMsg(3, 42, ipv4, 0), []msg{{id: 42, queue: 3, n: 20, payload: ipv4}}, nil},
		{"cut payload has CAP_LEN", packetMsg(0, 1, ipv4, 1500), []msg{{id: 1, n: 1500, payload: ipv4}}, nil},
		{"unknown attributes skipped", packetMsg(0, 2, odd, 0, mark), []msg{{id: 2, n: 3, payload: odd}}, nil},
		{"no payload (copy meta)", packetMsg(0, 5, nil, 0), []msg{{id: 5}}, nil},
		{"two in one datagram", append(packetMsg(0, 1, odd, 0), packetMsg(0, 2, ipv4, 0)...),
			[]msg{{id: 1, n: 3, payload: odd}, {id: 2, n: 20, payload: ipv4}}, nil},
		{"ack", errMsg(7, 0), []msg{{ack: true, seq: 7}}, nil},
		{"error", errMsg(8, -16), []msg{{ack: true, seq: 8, errno: 16}}, nil},
		{"other type ignored", noop, []msg{{ignored: 1}}, nil},
		{"length past the buffer", packetMsg(0, 1, ipv4, 0)[:30], nil, ErrTruncated},
		{"attribute past the message", func() []byte {
			b := packetMsg(0, 1, ipv4, 0)
			ne.PutUint16(b[nlmsgHdrLen+nfgenLen:], 200)
			return b
		}(), nil, ErrTruncated},
	} {
		var got []msg
		err := ParseMessages(tc.in, func(m *Message) error {
			g := msg{ack: m.IsAck, errno: m.Errno, seq: m.Seq, ignored: m.Ignored}
			if p := m.Packet; p != nil {
				g.id, g.queue, g.n, g.payload = p.ID, p.Queue, p.Len, append([]byte(nil), p.Payload...)
				if p.HwProto != 0x0800 || p.Hook != 3 {
					t.Errorf("%s: hw proto %#x hook %d", tc.name, p.HwProto, p.Hook)
				}
			}
			got = append(got, g)
			return nil
		})
		if tc.wantErr != nil {
			if !errors.Is(err, tc.wantErr) {
				t.Errorf("%s: error %v, want %v", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if len(got) != len(tc.want) {
			t.Errorf("%s: %d messages %+v, want %d", tc.name, len(got), got, len(tc.want))
			continue
		}
		for i := range got {
			g, w := got[i], tc.want[i]
			if g.id != w.id || g.queue != w.queue || g.n != w.n || !bytes.Equal(g.payload, w.payload) ||
				g.ack != w.ack || g.errno != w.errno || g.seq != w.seq || g.ignored != w.ignored {
				t.Errorf("%s: message %d = %+v, want %+v", tc.name, i, g, w)
			}
		}
	}
}

func TestMissingPacketHeader(t *testing.T) {
	b := appendHdr(nil, msgPacket, 0, 0, 0)
	b = finish(appendAttr(b, attrPayload, []byte{1, 2, 3, 4}), 0)
	if err := ParseMessages(b, func(*Message) error { return nil }); err == nil {
		t.Error("a packet without NFQA_PACKET_HDR parsed")
	}
}

func TestClassify(t *testing.T) {
	a := &Agent{}
	tab, err := newTable([]Link{
		{Name: "subnet", Prefix: netip.MustParsePrefix("10.1.0.0/16")},
		{Name: "host", Prefix: netip.MustParsePrefix("10.1.2.3/32")},
		{Name: "v6", Prefix: netip.MustParsePrefix("fd00::/64")},
	}, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	v4 := func(d [4]byte) []byte {
		p := make([]byte, 20)
		p[0] = 0x45
		copy(p[16:], d[:])
		return p
	}
	v6 := func(d netip.Addr) []byte {
		p := make([]byte, 40)
		p[0] = 0x60
		b := d.As16()
		copy(p[24:], b[:])
		return p
	}
	for _, tc := range []struct {
		p    []byte
		want string
	}{
		{v4([4]byte{10, 1, 2, 3}), "host"},
		{v4([4]byte{10, 1, 9, 9}), "subnet"},
		{v4([4]byte{10, 2, 0, 1}), "other"},
		{v6(netip.MustParseAddr("fd00::5")), "v6"},
		{v6(netip.MustParseAddr("fd01::5")), "other"},
		{[]byte{0x45, 0}, "other"},
	} {
		if got := a.classify(tab, tc.p).Name; got != tc.want {
			t.Errorf("classify % x = %s, want %s", tc.p, got, tc.want)
		}
	}
}

func TestPace(t *testing.T) {
	const ms = int64(time.Millisecond)
	var next int64
	// 8 Mbit/s: 1000 bytes take 1 ms; a 3000-byte queue holds three.
	for i, want := range []struct {
		at int64
		ok bool
	}{{1 * ms, true}, {2 * ms, true}, {3 * ms, true}, {0, false}} {
		at, ok := pace(0, 0, &next, 8e6, 3000, 1000)
		if ok != want.ok || ok && at != want.at {
			t.Errorf("packet %d: departs %v %v, want %v %v", i, at, ok, want.at, want.ok)
		}
	}
	if at, ok := pace(10*ms, 10*ms, &next, 0, 0, 1000); !ok || at != 10*ms {
		t.Errorf("unlimited: %v %v", at, ok)
	}
}

func TestParseQueueStats(t *testing.T) {
	data := []byte("    0  23456     3 2   128     5     7      100  1\n    1      0     0 2 65535     0     0        0  1\n")
	q, err := parseQueueStats(data, 0)
	if err != nil || q.PortID != 23456 || q.Total != 3 || q.QueueDropped != 5 || q.UserDropped != 7 || q.IDSequence != 100 {
		t.Errorf("queue 0: %+v %v", q, err)
	}
	if _, err := parseQueueStats(data, 2); err == nil {
		t.Error("queue 2 found")
	}
}
