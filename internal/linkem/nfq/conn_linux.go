package nfq

import (
	"errors"
	"fmt"
	"runtime"
	"sync"
	"time"

	"golang.org/x/sys/unix"
)

// Conn is a netlink socket bound to one NFQUEUE queue.
type Conn struct {
	fd    int
	queue uint16
	seq   uint32
	wmu   sync.Mutex // one send at a time (the receiver's and the delivery loop's)
}

// ConnConfig is how a queue is bound.
type ConnConfig struct {
	Queue uint16
	// CopyRange is how much of each packet the kernel copies up (default
	// 128: the IPv4 or IPv6 header, which holds the destination).
	CopyRange uint32
	// MaxLen is the kernel queue's length in packets: packets held for
	// their delay wait in it (default 65536; the kernel's own is 1024).
	MaxLen uint32
	// RcvBuf is the socket's receive buffer in bytes (default 8 MiB).
	RcvBuf int
	// Netns, if set, is a named network namespace (/run/netns/NAME) to bind
	// the queue in instead of the caller's: a socket belongs to the
	// namespace it was created in.
	Netns string
}

// Open creates the socket, binds cfg.Queue with copy mode packet and GSO
// packets queued whole, and returns the connection. Only one process binds
// a queue at a time (EBUSY otherwise).
func Open(cfg ConnConfig) (*Conn, error) {
	if cfg.CopyRange == 0 {
		cfg.CopyRange = 128
	}
	if cfg.MaxLen == 0 {
		cfg.MaxLen = 65536
	}
	if cfg.RcvBuf == 0 {
		cfg.RcvBuf = 8 << 20
	}
	fd, err := socketIn(cfg.Netns)
	if err != nil {
		return nil, err
	}
	c := &Conn{fd: fd, queue: cfg.Queue}
	if err := c.setup(cfg); err != nil {
		_ = unix.Close(fd)
		return nil, err
	}
	return c, nil
}

func socketIn(netns string) (int, error) {
	if netns == "" {
		return socket()
	}
	// setns on a locked thread, then back; the socket stays in netns.
	type res struct {
		fd  int
		err error
	}
	ch := make(chan res, 1)
	go func() {
		runtime.LockOSThread()
		back, err := unix.Open("/proc/thread-self/ns/net", unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- res{-1, fmt.Errorf("nfq: own netns: %w", err)}
			return // the thread stays locked and dies with the goroutine
		}
		defer unix.Close(back)
		target, err := unix.Open("/run/netns/"+netns, unix.O_RDONLY|unix.O_CLOEXEC, 0)
		if err != nil {
			ch <- res{-1, fmt.Errorf("nfq: netns %s: %w", netns, err)}
			runtime.UnlockOSThread()
			return
		}
		defer unix.Close(target)
		if err := unix.Setns(target, unix.CLONE_NEWNET); err != nil {
			ch <- res{-1, fmt.Errorf("nfq: enter netns %s: %w", netns, err)}
			runtime.UnlockOSThread()
			return
		}
		fd, err := socket()
		if unix.Setns(back, unix.CLONE_NEWNET) == nil {
			runtime.UnlockOSThread() // else the thread dies with the goroutine
		}
		ch <- res{fd, err}
	}()
	r := <-ch
	return r.fd, r.err
}

func socket() (int, error) {
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_RAW|unix.SOCK_CLOEXEC, unix.NETLINK_NETFILTER)
	if err != nil {
		return -1, fmt.Errorf("nfq: netlink socket: %w", err)
	}
	if err := unix.Bind(fd, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		_ = unix.Close(fd)
		return -1, fmt.Errorf("nfq: bind netlink socket: %w", err)
	}
	return fd, nil
}

func (c *Conn) setup(cfg ConnConfig) error {
	if err := unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUFFORCE, cfg.RcvBuf); err != nil {
		_ = unix.SetsockoptInt(c.fd, unix.SOL_SOCKET, unix.SO_RCVBUF, cfg.RcvBuf) // not root: what rmem_max allows
	}
	// A receive times out so that the receiver notices Close.
	tv := unix.NsecToTimeval(int64(100 * time.Millisecond))
	if err := unix.SetsockoptTimeval(c.fd, unix.SOL_SOCKET, unix.SO_RCVTIMEO, &tv); err != nil {
		return fmt.Errorf("nfq: SO_RCVTIMEO: %w", err)
	}
	// Errors of verdicts come back without an ack; acks are asked only for config.
	_ = unix.SetsockoptInt(c.fd, unix.SOL_NETLINK, unix.NETLINK_EXT_ACK, 1)
	if err := c.request(func(seq uint32) []byte { return AppendConfigCmd(nil, seq, c.queue, CmdBind) }); err != nil {
		if errors.Is(err, unix.EBUSY) {
			return fmt.Errorf("nfq: bind queue %d: another process holds it: %w", c.queue, err)
		}
		return fmt.Errorf("nfq: bind queue %d: %w (is nfnetlink_queue loaded? /proc/net/netfilter/nfnetlink_queue)", c.queue, err)
	}
	if err := c.request(func(seq uint32) []byte {
		return AppendConfigParams(nil, seq, c.queue, CopyPacket, cfg.CopyRange, cfg.MaxLen, FlagGSO, FlagGSO)
	}); err != nil {
		return fmt.Errorf("nfq: configure queue %d: %w", c.queue, err)
	}
	return nil
}

// request sends one message that asks for an ack and waits for it (packets
// received meanwhile cannot be, since the queue's rule is installed after).
func (c *Conn) request(build func(seq uint32) []byte) error {
	c.seq++
	seq := c.seq
	if err := c.Send(build(seq)); err != nil {
		return err
	}
	buf := make([]byte, 8192)
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		n, err := c.recv(buf)
		if errors.Is(err, unix.EAGAIN) || errors.Is(err, unix.EINTR) {
			continue
		}
		if err != nil {
			return err
		}
		var got error
		done := false
		if err := ParseMessages(buf[:n], func(m *Message) error {
			if m.IsAck && m.Seq == seq {
				done = true
				if m.Errno != 0 {
					got = unix.Errno(m.Errno)
				}
			}
			return nil
		}); err != nil {
			return err
		}
		if done {
			return got
		}
	}
	return errors.New("no acknowledgement from the kernel in 5 s")
}

// Send writes b (one or more messages, e.g. a batch of verdicts) to the
// kernel in one datagram.
func (c *Conn) Send(b []byte) error {
	c.wmu.Lock()
	defer c.wmu.Unlock()
	for {
		err := unix.Sendto(c.fd, b, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK})
		if errors.Is(err, unix.EINTR) {
			continue
		}
		return err
	}
}

func (c *Conn) recv(buf []byte) (int, error) {
	n, _, err := unix.Recvfrom(c.fd, buf, 0)
	return n, err
}

// Recv reads one datagram into buf and calls fn for each of its messages.
// It returns unix.EAGAIN after 100 ms without one, and unix.ENOBUFS when the
// socket's buffer overflowed (the kernel dropped packets it could not
// queue up to us: they are lost, as on a full queue).
func (c *Conn) Recv(buf []byte, fn func(*Message) error) error {
	n, err := c.recv(buf)
	if err != nil {
		return err
	}
	return ParseMessages(buf[:n], fn)
}

// Queue is the bound queue's number.
func (c *Conn) Queue() uint16 { return c.queue }

// Close unbinds the queue (packets still queued are dropped by the kernel,
// or pass when the rule says bypass and no one listens) and closes the
// socket.
func (c *Conn) Close() error {
	_ = c.Send(AppendConfigCmd(nil, 0, c.queue, CmdUnbind))
	return unix.Close(c.fd)
}
