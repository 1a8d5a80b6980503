// Package nfq is linkem's egress NFQUEUE agent: it runs in one node's
// network namespace, has the kernel queue that node's outgoing packets (an
// nft rule per emulated destination) and holds each packet's verdict until
// its link's delay (+ jitter) has passed, drops it for loss, and paces it
// for bandwidth. It is the packet-level emulation for runners whose nodes
// run apart (Docker Swarm), where no one process owns every node's link as
// the userspace switch does; docs/linkem.md, "The NFQUEUE agent".
//
// The NFQUEUE protocol is spoken over raw netlink (golang.org/x/sys/unix):
// this file is its messages, conn_linux.go the socket.
package nfq

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// Netlink and nfnetlink_queue constants (linux/netlink.h,
// linux/netfilter/nfnetlink.h, linux/netfilter/nfnetlink_queue.h); x/sys
// has the netlink ones but none of the queue's.
const (
	nlmsgHdrLen = 16 // struct nlmsghdr
	nfgenLen    = 4  // struct nfgenmsg
	nlaHdrLen   = 4  // struct nlattr

	nlmsgError = 2 // NLMSG_ERROR

	nlmFRequest = 0x1 // NLM_F_REQUEST
	nlmFAck     = 0x4 // NLM_F_ACK

	subsysQueue = 3 // NFNL_SUBSYS_QUEUE

	msgPacket  = 0 // NFQNL_MSG_PACKET: kernel → agent
	msgVerdict = 1 // NFQNL_MSG_VERDICT: agent → kernel
	msgConfig  = 2 // NFQNL_MSG_CONFIG

	// NFQNL_MSG_CONFIG attributes.
	cfgCmd      = 1 // NFQA_CFG_CMD: struct nfqnl_msg_config_cmd
	cfgParams   = 2 // NFQA_CFG_PARAMS: struct nfqnl_msg_config_params
	cfgQueueMax = 3 // NFQA_CFG_QUEUE_MAXLEN: __be32
	cfgMask     = 4 // NFQA_CFG_MASK: __be32
	cfgFlags    = 5 // NFQA_CFG_FLAGS: __be32

	// nfqnl_msg_config_cmd commands.
	CmdBind   = 1 // NFQNL_CFG_CMD_BIND
	CmdUnbind = 2 // NFQNL_CFG_CMD_UNBIND

	// Copy modes.
	CopyMeta   = 1 // NFQNL_COPY_META
	CopyPacket = 2 // NFQNL_COPY_PACKET

	// NFQA_CFG_FLAGS bits.
	FlagFailOpen = 0x1 // NFQA_CFG_F_FAIL_OPEN: accept, not drop, when the queue is full
	FlagGSO      = 0x4 // NFQA_CFG_F_GSO: queue GSO packets whole, not segmented

	// NFQNL_MSG_PACKET / _VERDICT attributes.
	attrPacketHdr  = 1  // NFQA_PACKET_HDR: struct nfqnl_msg_packet_hdr
	attrVerdictHdr = 2  // NFQA_VERDICT_HDR: struct nfqnl_msg_verdict_hdr
	attrPayload    = 10 // NFQA_PAYLOAD
	attrCapLen     = 13 // NFQA_CAP_LEN: __be32, the packet's length when the payload was cut

	// Verdicts (linux/netfilter.h).
	Drop   = 0 // NF_DROP
	Accept = 1 // NF_ACCEPT
)

// VerdictLen is the size of one verdict message.
const VerdictLen = nlmsgHdrLen + nfgenLen + nlaHdrLen + 8

var ne = binary.NativeEndian // netlink headers are host order; NFQ payloads big-endian

func align4(n int) int { return (n + 3) &^ 3 }

// appendHdr appends a nlmsghdr and nfgenmsg for an NFQ message of type msg
// on queue; the length is fixed by finish.
func appendHdr(b []byte, msg uint16, flags uint16, seq uint32, queue uint16) []byte {
	b = ne.AppendUint32(b, 0) // nlmsg_len, set by finish
	b = ne.AppendUint16(b, subsysQueue<<8|msg)
	b = ne.AppendUint16(b, nlmFRequest|flags)
	b = ne.AppendUint32(b, seq)
	b = ne.AppendUint32(b, 0) // nlmsg_pid: the kernel
	b = append(b, 0 /* AF_UNSPEC */, 0 /* NFNETLINK_V0 */)
	return binary.BigEndian.AppendUint16(b, queue) // res_id
}

func appendAttr(b []byte, typ uint16, val []byte) []byte {
	b = ne.AppendUint16(b, uint16(nlaHdrLen+len(val)))
	b = ne.AppendUint16(b, typ)
	b = append(b, val...)
	for range align4(len(val)) - len(val) {
		b = append(b, 0)
	}
	return b
}

func be32(v uint32) []byte { return binary.BigEndian.AppendUint32(nil, v) }

// finish sets the length of the message that starts at start.
func finish(b []byte, start int) []byte {
	ne.PutUint32(b[start:], uint32(len(b)-start))
	return b
}

// AppendConfigCmd appends a config message with a command (CmdBind,
// CmdUnbind) for queue, asking for an acknowledgement.
func AppendConfigCmd(b []byte, seq uint32, queue uint16, cmd uint8) []byte {
	s := len(b)
	b = appendHdr(b, msgConfig, nlmFAck, seq, queue)
	b = appendAttr(b, cfgCmd, []byte{cmd, 0, 0, 0}) // command, pad, __be16 pf (unused since 3.8)
	return finish(b, s)
}

// AppendConfigParams appends a config message setting queue's copy mode and
// range, its length limit (0: leave the kernel's 1024) and the flags in mask
// to flags, asking for an acknowledgement.
func AppendConfigParams(b []byte, seq uint32, queue uint16, mode uint8, copyRange, maxLen, flags, mask uint32) []byte {
	s := len(b)
	b = appendHdr(b, msgConfig, nlmFAck, seq, queue)
	b = appendAttr(b, cfgParams, append(be32(copyRange), mode)) // __be32 copy_range; __u8 copy_mode (packed)
	if maxLen > 0 {
		b = appendAttr(b, cfgQueueMax, be32(maxLen))
	}
	if mask != 0 {
		b = appendAttr(b, cfgFlags, be32(flags))
		b = appendAttr(b, cfgMask, be32(mask))
	}
	return finish(b, s)
}

// AppendVerdict appends the verdict (Accept, Drop) for packet id of queue.
// Several verdicts go to the kernel in one send.
func AppendVerdict(b []byte, queue uint16, id, verdict uint32) []byte {
	s := len(b)
	b = appendHdr(b, msgVerdict, 0, 0, queue)
	b = appendAttr(b, attrVerdictHdr, binary.BigEndian.AppendUint32(be32(verdict), id)) // __be32 verdict; __be32 id
	return finish(b, s)
}

// Packet is one queued packet as the kernel reports it.
type Packet struct {
	Queue   uint16
	ID      uint32 // the id its verdict names
	HwProto uint16 // ethertype (0x0800 IPv4, 0x86dd IPv6)
	Hook    uint8
	// Payload is the packet from its network header, cut to the queue's copy
	// range; it aliases the receive buffer.
	Payload []byte
	// Len is the packet's whole length (NFQA_CAP_LEN when the payload was
	// cut, else the payload's length).
	Len int
}

// Message is one netlink message from the kernel: a queued packet, or an
// error or acknowledgement (Errno 0) of request Seq.
type Message struct {
	Packet  *Packet
	IsAck   bool // an NLMSG_ERROR: Errno is 0 for an acknowledgement
	Errno   int32
	Seq     uint32
	Ignored uint16 // the type of a message that is neither (else 0)
}

// ErrTruncated is returned for a message or attribute whose length runs
// past its buffer.
var ErrTruncated = errors.New("nfq: truncated netlink message")

// ParseMessages calls fn for every netlink message in b (one datagram). The
// Packet passed aliases b and is reused: fn must copy what it keeps.
func ParseMessages(b []byte, fn func(*Message) error) error {
	var m Message
	var p Packet
	for len(b) >= nlmsgHdrLen {
		n := int(ne.Uint32(b))
		if n < nlmsgHdrLen || n > len(b) {
			return fmt.Errorf("%w: length %d of %d", ErrTruncated, n, len(b))
		}
		typ, seq := ne.Uint16(b[4:]), ne.Uint32(b[8:])
		body := b[nlmsgHdrLen:n]
		m = Message{Seq: seq}
		switch {
		case typ == nlmsgError:
			if len(body) < 4 {
				return fmt.Errorf("%w: NLMSG_ERROR of %d bytes", ErrTruncated, len(body))
			}
			m.IsAck, m.Errno = true, -int32(ne.Uint32(body))
		case typ == subsysQueue<<8|msgPacket:
			if err := parsePacket(body, &p); err != nil {
				return err
			}
			m.Packet = &p
		default: // NLMSG_DONE, NLMSG_NOOP, …
			m.Ignored = typ
		}
		if err := fn(&m); err != nil {
			return err
		}
		b = b[min(align4(n), len(b)):]
	}
	return nil
}

func parsePacket(body []byte, p *Packet) error {
	if len(body) < nfgenLen {
		return fmt.Errorf("%w: packet message of %d bytes", ErrTruncated, len(body))
	}
	*p = Packet{Queue: binary.BigEndian.Uint16(body[2:])}
	hdr := false
	capLen := -1
	for a := body[nfgenLen:]; len(a) >= nlaHdrLen; {
		l, typ := int(ne.Uint16(a)), ne.Uint16(a[2:])&0x3fff // without NLA_F_NESTED / _NET_BYTEORDER
		if l < nlaHdrLen || l > len(a) {
			return fmt.Errorf("%w: attribute %d of length %d in %d", ErrTruncated, typ, l, len(a))
		}
		v := a[nlaHdrLen:l]
		switch typ {
		case attrPacketHdr:
			if len(v) < 7 {
				return fmt.Errorf("%w: packet header of %d bytes", ErrTruncated, len(v))
			}
			p.ID, p.HwProto, p.Hook, hdr = binary.BigEndian.Uint32(v), binary.BigEndian.Uint16(v[4:]), v[6], true
		case attrPayload:
			p.Payload = v
		case attrCapLen:
			if len(v) < 4 {
				return fmt.Errorf("%w: cap len of %d bytes", ErrTruncated, len(v))
			}
			capLen = int(binary.BigEndian.Uint32(v))
		}
		a = a[min(align4(l), len(a)):]
	}
	if !hdr {
		return errors.New("nfq: packet message without NFQA_PACKET_HDR")
	}
	p.Len = len(p.Payload)
	if capLen >= 0 {
		p.Len = capLen
	}
	return nil
}
