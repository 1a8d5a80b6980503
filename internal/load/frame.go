package load

import (
	"encoding/binary"
	"math/rand/v2"
)

// Websocket opcodes (RFC 6455 section 5.2).
const (
	opContinuation = 0x0
	opText         = 0x1
	opBinary       = 0x2
	opClose        = 0x8
	opPing         = 0x9
	opPong         = 0xA
)

// appendFrame appends one final, masked client frame (RFC 6455 5.2-5.3).
func appendFrame(b []byte, op byte, payload []byte) []byte {
	b = append(b, 0x80|op)
	switch n := len(payload); {
	case n < 126:
		b = append(b, 0x80|byte(n))
	case n <= 0xffff:
		b = append(b, 0x80|126, byte(n>>8), byte(n))
	default:
		b = append(b, 0x80|127, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32), byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
	key := rand.Uint32()
	b = binary.LittleEndian.AppendUint32(b, key)
	start := len(b)
	b = append(b, payload...)
	maskBytes(key, b[start:])
	return b
}

// maskBytes XORs b with the 4-byte key (its little-endian bytes, repeated),
// eight bytes at a time: byte i of b with byte i%4 of the key.
func maskBytes(key uint32, b []byte) {
	k := uint64(key) | uint64(key)<<32
	i := 0
	for ; i+8 <= len(b); i += 8 {
		binary.LittleEndian.PutUint64(b[i:], binary.LittleEndian.Uint64(b[i:])^k)
	}
	for ; i < len(b); i++ {
		b[i] ^= byte(key >> (8 * (i & 3)))
	}
}
