package cometbft

import (
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/libp2p/go-libp2p/core/peer"
	"github.com/pelletier/go-toml/v2"

	"github.com/benchnet/benchnet/internal/testenv"
)

// TestLibp2pID: the peer ID is the node key's public key, identity-hashed
// ("12D3KooW…" for ed25519), as go-libp2p decodes it back.
func TestLibp2pID(t *testing.T) {
	for i := range 3 {
		pub, priv, err := ed25519.GenerateKey(nil)
		if err != nil {
			t.Fatal(err)
		}
		home := t.TempDir()
		os.MkdirAll(filepath.Join(home, "config"), 0o755)
		key := fmt.Sprintf(`{"priv_key":{"type":"tendermint/PrivKeyEd25519","value":%q}}`, base64.StdEncoding.EncodeToString(priv))
		if err := os.WriteFile(filepath.Join(home, "config", "node_key.json"), []byte(key), 0o600); err != nil {
			t.Fatal(err)
		}
		s, err := Libp2pID(home)
		if err != nil {
			t.Fatal(err)
		}
		id, err := peer.Decode(s)
		if err != nil || !strings.HasPrefix(s, "12D3KooW") {
			t.Fatalf("key %d: %q does not decode as an ed25519 peer ID: %v", i, s, err)
		}
		pk, err := id.ExtractPublicKey()
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := pk.Raw()
		if string(raw) != string(pub) {
			t.Errorf("key %d: the ID's public key %x is not the node key's %x", i, raw, pub)
		}
	}
}

// TestLibp2pSettings patches v0.40.0's pristine config.toml for the
// libp2p example: go-libp2p on, every persistent peer a bootstrap peer
// (address and ID), PEX and the comet-p2p peer lists off; golden file
// testdata/v0.40.0/libp2p-validator0.config.toml.golden.
func TestLibp2pSettings(t *testing.T) {
	pristine, err := os.ReadFile(filepath.Join("testdata", "v0.40.0", "config.toml"))
	if err != nil {
		t.Fatal(err)
	}
	p := loadPlan(t, "libp2p", "v0.40.0")
	n := p.Node("validator0")
	if n.Transport != "libp2p" {
		t.Fatalf("plan transport %q", n.Transport)
	}
	ids := map[string]string{}
	for i, m := range p.Nodes {
		ids[m.Name] = fmt.Sprintf("12D3KooWPeer%d", i)
	}
	set, err := Settings(p, n, ids)
	if err != nil {
		t.Fatal(err)
	}
	got, err := PatchConfig(pristine, set, n.Release.String())
	if err != nil {
		t.Fatal(err)
	}
	testenv.Golden(t, filepath.Join("testdata", "v0.40.0", "libp2p-validator0.config.toml.golden"), got)
	var c struct {
		P2P struct {
			PersistentPeers string `toml:"persistent_peers"`
			Seeds           string `toml:"seeds"`
			Pex             bool   `toml:"pex"`
			Libp2p          struct {
				Enabled bool `toml:"enabled"`
				Boot    []struct {
					Host       string `toml:"host"`
					ID         string `toml:"id"`
					Persistent bool   `toml:"persistent"`
				} `toml:"bootstrap_peers"`
			} `toml:"libp2p"`
		} `toml:"p2p"`
	}
	if err := toml.Unmarshal(got, &c); err != nil {
		t.Fatalf("patched config is not valid TOML: %v", err)
	}
	if !c.P2P.Libp2p.Enabled || c.P2P.Pex || c.P2P.PersistentPeers != "" || c.P2P.Seeds != "" {
		t.Errorf("p2p: %+v", c.P2P)
	}
	if len(c.P2P.Libp2p.Boot) != len(n.PersistentPeers) {
		t.Fatalf("%d bootstrap peers, want %d", len(c.P2P.Libp2p.Boot), len(n.PersistentPeers))
	}
	for i, name := range n.PersistentPeers {
		b, peer := c.P2P.Libp2p.Boot[i], p.Node(name)
		if b.Host != peer.P2PAddr() || b.ID != ids[name] || !b.Persistent {
			t.Errorf("bootstrap peer %d: %+v, want %s %s persistent", i, b, peer.P2PAddr(), ids[name])
		}
	}
	// A release without [p2p.libp2p] refuses it by name.
	v1, _ := os.ReadFile(filepath.Join("testdata", "v1.0.1", "config.toml"))
	if _, err := PatchConfig(v1, set, "cometbft@v1.0.1"); err == nil || !strings.Contains(err.Error(), "came with cometbft v0.40.0") {
		t.Errorf("v1.0.1: %v", err)
	}
}
