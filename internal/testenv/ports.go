package testenv

import (
	"fmt"
	"math/rand/v2"
	"net"
	"sync"
	"testing"
)

// Ports below Linux's default ephemeral range (32768-60999): a port picked
// by binding :0 lies inside it, so between the pick and the node's own bind
// any outbound connection (a libp2p dial, an HTTP poll) can take it as its
// source port. CI failed on exactly that ("bind: address already in use",
// 2026-11-30). A port from this range is only ever taken by a listener.
const (
	portLo = 20000
	portHi = 32000
)

var (
	portsMu sync.Mutex
	given   = map[int]bool{}
)

// FreePort returns a TCP port outside the ephemeral range that is free on
// every address now and was not handed out before in this test process.
func FreePort(t testing.TB) int {
	t.Helper()
	portsMu.Lock()
	defer portsMu.Unlock()
	for range 1000 {
		p := portLo + rand.IntN(portHi-portLo)
		if given[p] || !bindable(p) {
			continue
		}
		given[p] = true
		return p
	}
	t.Fatalf("no free TCP port in [%d, %d) after 1000 tries", portLo, portHi)
	return 0
}

// bindable reports whether p can be listened on both on every address and
// on loopback, as nodes do one or the other.
func bindable(p int) bool {
	for _, addr := range []string{fmt.Sprintf("0.0.0.0:%d", p), fmt.Sprintf("127.0.0.1:%d", p)} {
		l, err := net.Listen("tcp4", addr)
		if err != nil {
			return false
		}
		l.Close()
	}
	return true
}
