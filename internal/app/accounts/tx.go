// Package accounts is benchnet's own ABCI 2.0 application: accounts with
// balances and sequence numbers, ed25519-signed transactions (a transfer or
// a wide-state write of K distinct keys), state in a cometbft-db key-value
// store. CheckTx works like a Cosmos SDK ante handler (wrong signature,
// used sequence and future sequence each get their own code) or, with the
// app-side nonce queue, holds future sequences and lets PrepareProposal
// order each sender's txs by sequence. Any other tx in kvstore's "key=value"
// form is stored as is, so kv workloads and the harness's warm-up run on it.
package accounts

import (
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
)

// Result codes of CheckTx and FinalizeBlock.
const (
	CodeOK          uint32 = 0
	CodeMalformed   uint32 = 1 // neither an accounts tx nor a key=value tx
	CodeBadSig      uint32 = 2 // the signature does not verify
	CodeUsedSeq     uint32 = 3 // sequence already used (a replay)
	CodeFutureSeq   uint32 = 4 // sequence ahead of the account (baseline), or too far ahead (queue)
	CodeNoFunds     uint32 = 5 // transfer larger than the balance
	CodeDuplicateSq uint32 = 6 // queue: another tx with this sender and sequence is pending
	// CodePoolFull: the app-side mempool (ABCIMempool) holds PoolSize txs.
	// At cometbft v0.40's abci.CodeTypeRetry (32000), so the node forgets
	// the tx soon and takes it again when offered.
	CodePoolFull uint32 = 32000
)

// Ops of an accounts tx.
const (
	OpTransfer byte = 1 // Amount to To
	OpWrite    byte = 2 // write Keys distinct keys derived from (sender, sequence, i)
)

// Magic starts every accounts tx (a kv tx is printable text and never does).
var Magic = [4]byte{0xbe, 0x4e, 0xac, 0x01}

// Tx is one accounts transaction.
type Tx struct {
	PubKey   ed25519.PublicKey
	Sequence uint64
	Op       byte
	To       [AddrLen]byte // transfer
	Amount   uint64        // transfer
	Keys     uint16        // write
	Sig      []byte
}

// AddrLen is the length of an account address: the first 20 bytes of
// SHA-256 of the public key (as CometBFT derives validator addresses).
const AddrLen = 20

// Address of a public key.
func Address(pub ed25519.PublicKey) [AddrLen]byte {
	h := sha256.Sum256(pub)
	return [AddrLen]byte(h[:AddrLen])
}

// layout: magic(4) pubkey(32) seq(8) op(1) body sig(64); the body is
// to(20) amount(8) for a transfer and keys(2) for a write.
const (
	headerLen   = 4 + ed25519.PublicKeySize + 8 + 1
	transferLen = AddrLen + 8
	writeLen    = 2
)

// MaxWriteKeys bounds a write's keys, so one tx cannot stall a block.
const MaxWriteKeys = 1024

// signBytes is everything the signature covers.
func (t *Tx) signBytes() []byte {
	b := make([]byte, 0, headerLen+transferLen)
	b = append(b, Magic[:]...)
	b = append(b, t.PubKey...)
	b = binary.BigEndian.AppendUint64(b, t.Sequence)
	b = append(b, t.Op)
	switch t.Op {
	case OpTransfer:
		b = append(b, t.To[:]...)
		b = binary.BigEndian.AppendUint64(b, t.Amount)
	case OpWrite:
		b = binary.BigEndian.AppendUint16(b, t.Keys)
	}
	return b
}

// Sign fills PubKey and Sig with priv's and returns the tx's bytes.
func (t *Tx) Sign(priv ed25519.PrivateKey) []byte {
	t.PubKey = priv.Public().(ed25519.PublicKey)
	msg := t.signBytes()
	t.Sig = ed25519.Sign(priv, msg)
	return append(msg, t.Sig...)
}

// IsAccountsTx reports whether b is framed as an accounts tx.
func IsAccountsTx(b []byte) bool { return len(b) >= 4 && [4]byte(b[:4]) == Magic }

// Decode parses an accounts tx without checking its signature.
func Decode(b []byte) (*Tx, error) {
	if !IsAccountsTx(b) {
		return nil, errors.New("not an accounts tx")
	}
	if len(b) < headerLen+ed25519.SignatureSize {
		return nil, fmt.Errorf("accounts tx of %d bytes is too short", len(b))
	}
	t := &Tx{
		PubKey:   ed25519.PublicKey(b[4 : 4+ed25519.PublicKeySize]),
		Sequence: binary.BigEndian.Uint64(b[4+ed25519.PublicKeySize:]),
		Op:       b[headerLen-1],
	}
	body := b[headerLen : len(b)-ed25519.SignatureSize]
	switch t.Op {
	case OpTransfer:
		if len(body) != transferLen {
			return nil, fmt.Errorf("transfer body of %d bytes, want %d", len(body), transferLen)
		}
		t.To = [AddrLen]byte(body[:AddrLen])
		t.Amount = binary.BigEndian.Uint64(body[AddrLen:])
	case OpWrite:
		if len(body) != writeLen {
			return nil, fmt.Errorf("write body of %d bytes, want %d", len(body), writeLen)
		}
		t.Keys = binary.BigEndian.Uint16(body)
		if t.Keys == 0 || t.Keys > MaxWriteKeys {
			return nil, fmt.Errorf("write of %d keys: want 1 to %d", t.Keys, MaxWriteKeys)
		}
	default:
		return nil, fmt.Errorf("unknown op %d", t.Op)
	}
	t.Sig = b[len(b)-ed25519.SignatureSize:]
	return t, nil
}

// Verify checks the signature.
func (t *Tx) Verify() bool { return ed25519.Verify(t.PubKey, t.signBytes(), t.Sig) }

// WriteKey is the i-th key a write of (sender, sequence) stores: distinct
// for every (sender, sequence, i), so the state grows by Keys per tx.
func WriteKey(addr [AddrLen]byte, seq uint64, i int) []byte {
	var b [AddrLen + 8 + 2]byte
	copy(b[:], addr[:])
	binary.BigEndian.PutUint64(b[AddrLen:], seq)
	binary.BigEndian.PutUint16(b[AddrLen+8:], uint16(i))
	h := sha256.Sum256(b[:])
	return h[:16]
}

// KeyFor derives account i's key from a seed and a label (the run): every
// run of a testnet gets fresh accounts, and a re-run with the same seed and
// label the same ones.
func KeyFor(seed int64, label string, i int) ed25519.PrivateKey {
	h := sha256.New()
	fmt.Fprintf(h, "benchnet-accounts\x00%d\x00%s\x00%d", seed, label, i)
	return ed25519.NewKeyFromSeed(h.Sum(nil))
}

// verified decodes an accounts tx and checks its signature: CodeOK with
// the tx, or the code and log a rejection carries.
func verified(b []byte) (*Tx, uint32, string) {
	tx, err := Decode(b)
	if err != nil {
		return nil, CodeMalformed, err.Error()
	}
	if !tx.Verify() {
		return nil, CodeBadSig, "signature does not verify"
	}
	return tx, CodeOK, ""
}
