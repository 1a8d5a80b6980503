// Package gossipsub is the gossip lab's node kind: benchnet's own libp2p
// host on go-libp2p-pubsub (v0.15.0, go-libp2p v0.39.1), one process per
// network namespace, run as `benchnet node gossipsub --config FILE`. The
// harness side (Driver) writes each host's config from the plan, starts the
// hosts and asks them to publish over a small HTTP control endpoint; the
// host side (Run) peers statically with its planned neighbours and appends
// every event that matters to traces/<node>.csv (rundir.GossipTraceCSV).
package gossipsub

import (
	"bytes"
	"crypto/ed25519"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/benchnet/benchnet/internal/kinds/gossipsub/spec"
	"github.com/benchnet/benchnet/internal/manifest"
)

// Topic is the one topic every host joins.
const Topic = "benchnet"

// MsgIDLen is the length of a message ID: every payload starts with it and
// the hosts' message-ID function reads it back (so IDs are the harness's,
// not a hash, and traces join published.csv directly).
const MsgIDLen = manifest.MinPublishSize

// Config is one host's configuration file (JSON), written by the driver.
type Config struct {
	Node  string `json:"node"`
	Index int    `json:"index"`
	Seed  int64  `json:"seed"`
	// Addr is the host's address in its namespace; every port listens on
	// it. Host, when set, is the name peers dial instead (a swarm service's
	// alias, plan.Node.Host): the namespace's address is then the engine's
	// choice, so the host listens on all of its addresses.
	Addr        string `json:"addr"`
	Host        string `json:"host,omitempty"`
	P2PPort     int    `json:"p2p_port"`
	ControlPort int    `json:"control_port"`
	MetricsPort int    `json:"metrics_port"`
	// Peers are the planned neighbours; Dial marks the ones this host dials
	// (the other side dials the rest).
	Peers  []Peer         `json:"peers"`
	Params spec.Gossipsub `json:"params"`
	// Trace is the path of the host's trace file (traces/<node>.csv).
	Trace string `json:"trace"`
	// TraceBuffer is the tracer's event buffer; events past it are counted
	// as dropped, never waited for (the router calls the tracer inline).
	TraceBuffer int `json:"trace_buffer"`
}

// Peer is a planned neighbour.
type Peer struct {
	Name string `json:"name"`
	ID   string `json:"id"`
	Addr string `json:"addr"`
	Host string `json:"host,omitempty"` // dialled by name (/dns4) when set
	Port int    `json:"port"`
	Dial bool   `json:"dial"`
}

// ReadConfig reads a host's config file.
func ReadConfig(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read host config: %w", err)
	}
	var c Config
	if err := json.Unmarshal(data, &c); err != nil {
		return nil, fmt.Errorf("decode host config %s: %w", path, err)
	}
	if c.Node == "" || c.Addr == "" || c.P2PPort == 0 || c.ControlPort == 0 || c.Trace == "" {
		return nil, fmt.Errorf("host config %s: node, addr, p2p_port, control_port and trace are required", path)
	}
	return &c, nil
}

// Key is node index's fixed identity for a seed: an ed25519 key from
// SHA-256("benchnet-gossipsub/<seed>/<index>"), so a manifest and its seed
// give the same peer IDs on every run.
func Key(seed int64, index int) crypto.PrivKey {
	s := sha256.Sum256([]byte("benchnet-gossipsub/" + strconv.FormatInt(seed, 10) + "/" + strconv.Itoa(index)))
	k, err := crypto.UnmarshalEd25519PrivateKey(ed25519.NewKeyFromSeed(s[:]))
	if err != nil {
		// An ed25519 key from a 32-byte seed always unmarshals.
		panic(fmt.Sprintf("ed25519 key: %v", err))
	}
	return k
}

// PeerID is the peer ID of Key(seed, index).
func PeerID(seed int64, index int) peer.ID {
	id, err := peer.IDFromPrivateKey(Key(seed, index))
	if err != nil {
		panic(fmt.Sprintf("peer id: %v", err))
	}
	return id
}

// ensureDir creates the directory of a file (the trace's, normally made by
// the harness already).
func ensureDir(file string) error {
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
		return fmt.Errorf("trace directory: %w", err)
	}
	return nil
}

// trimCutRow truncates the file at path after its last newline: a writer
// killed mid-row leaves a cut last line. A missing file is fine.
func trimCutRow(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return err
	}
	end := st.Size()
	buf := make([]byte, 64<<10)
	for end > 0 {
		off := max(0, end-int64(len(buf)))
		b := buf[:end-off]
		if _, err := f.ReadAt(b, off); err != nil {
			return fmt.Errorf("read %s: %w", filepath.Base(path), err)
		}
		if i := bytes.LastIndexByte(b, '\n'); i >= 0 {
			end = off + int64(i) + 1
			break
		}
		end = off
	}
	if end == st.Size() {
		return nil
	}
	if err := f.Truncate(end); err != nil {
		return fmt.Errorf("drop the cut last row of %s: %w", filepath.Base(path), err)
	}
	return nil
}
