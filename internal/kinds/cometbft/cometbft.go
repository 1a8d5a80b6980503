// Package cometbft is the node driver for CometBFT releases. It is
// version-agnostic: node homes come from the release's own `testnet` and
// `init` commands, so every node gets the config.toml format its binary
// expects, and benchnet only patches the values it must set (addresses, peers,
// metrics, the app, the manifest's overrides) line by line in that file.
package cometbft

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	p2pcrypto "github.com/libp2p/go-libp2p/core/crypto"
	"github.com/libp2p/go-libp2p/core/peer"

	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/release"
)

// AppAddr is where the out-of-process kvstore (app "kvstore-socket") listens:
// on the node's own loopback, one app per node namespace.
const AppAddr = "tcp://127.0.0.1:26658"

// NodeArgv is the command line of a node whose home GenerateHomes made.
func NodeArgv(bin, home string) []string {
	return []string{bin, "start", "--home", home}
}

// AppArgv runs abci-cli's kvstore on AppAddr (--address is the same flag in
// v0.38.17 and v1.0.1; the server logs only connection events, and
// --log_level does not apply to it). Its state goes under the node's home
// (--persist): without it the app keeps a fresh directory under $TMPDIR that
// outlives the run.
func AppArgv(appBin, home string) []string {
	return []string{appBin, "kvstore", "--address", AppAddr, "--persist", AppDataDir(home)}
}

// AppDataDir is where the socket app of the node whose home is home keeps
// its state.
func AppDataDir(home string) string { return filepath.Join(home, "data", "app") }

// NodeID is the p2p ID of the node whose home is home: the hex of the first
// 20 bytes of SHA-256 of its ed25519 public key, as `cometbft show-node-id`
// prints it.
func NodeID(home string) (string, error) {
	priv, err := nodeKey(home)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(priv[32:]) // an ed25519 private key is seed ‖ public key
	return hex.EncodeToString(sum[:20]), nil
}

// Libp2pID is the go-libp2p peer ID of the node whose home is home, as a
// v0.40 node derives it from the same node key (lp2p.IDFromPrivateKey:
// the key as a libp2p ed25519 key, its identity-hashed public key,
// "12D3KooW…").
func Libp2pID(home string) (string, error) {
	priv, err := nodeKey(home)
	if err != nil {
		return "", err
	}
	sk, err := p2pcrypto.UnmarshalEd25519PrivateKey(priv)
	if err != nil {
		return "", fmt.Errorf("node key as a libp2p key: %w", err)
	}
	id, err := peer.IDFromPrivateKey(sk)
	if err != nil {
		return "", fmt.Errorf("libp2p peer ID: %w", err)
	}
	return id.String(), nil
}

// nodeKey is the 64-byte ed25519 private key of home's node_key.json.
func nodeKey(home string) ([]byte, error) {
	path := filepath.Join(home, "config", "node_key.json")
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read node key: %w", err)
	}
	var nk struct {
		PrivKey struct {
			Type  string `json:"type"`
			Value string `json:"value"`
		} `json:"priv_key"`
	}
	if err := json.Unmarshal(data, &nk); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	if !strings.Contains(nk.PrivKey.Type, "Ed25519") {
		return nil, fmt.Errorf("%s: key type %q, want an ed25519 key", path, nk.PrivKey.Type)
	}
	priv, err := base64.StdEncoding.DecodeString(nk.PrivKey.Value)
	if err != nil || len(priv) != 64 {
		return nil, fmt.Errorf("%s: not a 64-byte base64 ed25519 private key", path)
	}
	return priv, nil
}

// GenerateHomes creates homesDir/<node>/ for every node of p. Keys and the
// shared genesis come from one `cometbft testnet` run of the first
// validator's release (validators first, so they hold the genesis keys);
// nodes of another release get the config.toml of their own release's
// `init`. Each config.toml is then patched with Settings.
func GenerateHomes(ctx context.Context, p *plan.Testnet, bins map[release.Release]string, homesDir string) error {
	vals := p.Validators()
	if len(vals) == 0 {
		return errors.New("the testnet has no validator")
	}
	var others []*plan.Node
	for _, n := range p.Nodes {
		if n.Role != "validator" {
			others = append(others, n)
		}
		if bins[n.Release] == "" {
			return fmt.Errorf("node %s: no binary for %s", n.Name, n.Release)
		}
		if _, err := os.Stat(filepath.Join(homesDir, n.Name)); err == nil {
			return fmt.Errorf("node %s: home %s already exists", n.Name, filepath.Join(homesDir, n.Name))
		}
	}
	if err := os.MkdirAll(homesDir, 0o755); err != nil {
		return fmt.Errorf("create homes dir: %w", err)
	}
	tmp, err := os.MkdirTemp(homesDir, ".generate-")
	if err != nil {
		return fmt.Errorf("create scratch dir: %w", err)
	}
	defer os.RemoveAll(tmp)

	genRel := vals[0].Release
	out := filepath.Join(tmp, "testnet")
	if err := run(ctx, bins[genRel], "testnet",
		"--v", strconv.Itoa(len(vals)), "--n", strconv.Itoa(len(others)),
		"--o", out, "--populate-persistent-peers=false",
		"--home", filepath.Join(tmp, "unused-home")); err != nil {
		return err
	}

	// testnet writes node0… for validators, then the non-validators.
	order := append(append([]*plan.Node{}, vals...), others...)
	pristine := map[release.Release][]byte{} // config.toml of `init`, per foreign release
	ids := map[string]string{}
	for i, n := range order {
		home := filepath.Join(homesDir, n.Name)
		if err := os.Rename(filepath.Join(out, "node"+strconv.Itoa(i)), home); err != nil {
			return fmt.Errorf("node %s: move generated home: %w", n.Name, err)
		}
		if n.Release != genRel {
			cfg, ok := pristine[n.Release]
			if !ok {
				initHome := filepath.Join(tmp, "init-"+n.Release.String())
				if err := run(ctx, bins[n.Release], "init", "--home", initHome); err != nil {
					return err
				}
				if cfg, err = os.ReadFile(filepath.Join(initHome, "config", "config.toml")); err != nil {
					return fmt.Errorf("read %s's config.toml: %w", n.Release, err)
				}
				pristine[n.Release] = cfg
			}
			if err := os.WriteFile(configPath(home), cfg, 0o644); err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
		}
		// The ID peers dial: the node's own transport's (one per testnet,
		// manifest.validateTransport).
		id := NodeID
		if n.Transport == manifest.TransportLibp2p {
			id = Libp2pID
		}
		if ids[n.Name], err = id(home); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}

	if len(p.Genesis) > 0 {
		// One genesis for all: genRel's, patched once, copied to every home.
		first := filepath.Join(homesDir, order[0].Name, "config", "genesis.json")
		gen, err := os.ReadFile(first)
		if err != nil {
			return fmt.Errorf("read genesis: %w", err)
		}
		if gen, err = PatchGenesis(gen, p.Genesis, genRel.String()); err != nil {
			return fmt.Errorf("genesis (%s): %w", genRel, err)
		}
		for _, n := range order {
			if err := os.WriteFile(filepath.Join(homesDir, n.Name, "config", "genesis.json"), gen, 0o644); err != nil {
				return fmt.Errorf("node %s: %w", n.Name, err)
			}
		}
	}

	for _, n := range p.Nodes {
		set, err := Settings(p, n, ids)
		if err != nil {
			return fmt.Errorf("node %s (%s): %w", n.Name, n.Release, err)
		}
		path := configPath(filepath.Join(homesDir, n.Name))
		cfg, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
		scaled, err := ScaleTimeouts(cfg, set, p.Network.TimeScale)
		if err != nil {
			return fmt.Errorf("node %s (%s): %w", n.Name, n.Release, err)
		}
		patched, err := PatchConfig(cfg, append(set, scaled...), n.Release.String())
		if err != nil {
			return fmt.Errorf("node %s (%s): %w", n.Name, n.Release, err)
		}
		if err := os.WriteFile(path, patched, 0o644); err != nil {
			return fmt.Errorf("node %s: %w", n.Name, err)
		}
	}
	return nil
}

// Settings are what benchnet sets in node n's config.toml, in order: its
// identity, addresses and peers, metrics, the app, then the manifest's
// overrides sorted by key (so they win). ids maps node names to p2p IDs.
func Settings(p *plan.Testnet, n *plan.Node, ids map[string]string) ([]Setting, error) {
	peers, err := peerList(p, n.PersistentPeers, ids)
	if err != nil {
		return nil, fmt.Errorf("persistent peers: %w", err)
	}
	seeds, err := peerList(p, n.Seeds, ids)
	if err != nil {
		return nil, fmt.Errorf("seeds: %w", err)
	}
	var app string
	switch n.App {
	case "kvstore":
		app = "kvstore" // built into the cometbft binary
	case "kvstore-socket", AccountsApp:
		app = AppAddr
	default:
		return nil, fmt.Errorf("app %q: want kvstore, kvstore-socket or accounts", n.App)
	}
	set := []Setting{
		{"moniker", n.Name},
		{"proxy_app", app},
		{"p2p.laddr", "tcp://0.0.0.0:" + strconv.Itoa(n.P2PPort)},
		{"p2p.external_address", n.P2PAddr()},
		{"p2p.persistent_peers", peers},
		{"p2p.seeds", seeds},
	}
	switch {
	case n.Transport == manifest.TransportLibp2p:
		// go-libp2p dials bootstrap_peers (ids are libp2p peer IDs) over
		// QUIC on the p2p port; PEX is off, as node.go would turn it.
		boot, err := bootstrapPeers(p, append(slices.Clone(n.PersistentPeers), n.Seeds...), ids)
		if err != nil {
			return nil, fmt.Errorf("bootstrap peers: %w", err)
		}
		// Later settings win: the comet-p2p peer lists are emptied.
		set = append(set,
			Setting{"p2p.persistent_peers", ""},
			Setting{"p2p.seeds", ""},
			Setting{"p2p.pex", false},
			Setting{"p2p.libp2p.enabled", true},
			Setting{"p2p.libp2p.bootstrap_peers", boot})
	case p.Topology == "seeds":
		set = append(set, Setting{"p2p.pex", true})
	case p.Topology == "random":
		// The plan's random graph is the topology: PEX would grow it.
		set = append(set, Setting{"p2p.pex", false})
	}
	if n.Mempool == manifest.MempoolApp {
		// The app keeps the txs (InsertTx, ReapTxs); CometBFT gossips
		// what ReapTxs hands it and proposes what PrepareProposal builds.
		set = append(set, Setting{"mempool.type", manifest.MempoolApp})
	}
	set = append(set,
		Setting{"p2p.seed_mode", n.Role == "seed"},
		// Testnet addresses are private and may share a host.
		Setting{"p2p.addr_book_strict", false},
		Setting{"p2p.allow_duplicate_ip", true},
		// All addresses: a runner may reach the node at an address it does
		// not own (a swarm's published port); a host of its own either way.
		Setting{"rpc.laddr", "tcp://0.0.0.0:" + strconv.Itoa(n.RPCPort)},
		Setting{"instrumentation.prometheus", true},
		Setting{"instrumentation.prometheus_listen_addr", ":" + strconv.Itoa(n.PrometheusPort)},
		// The plan's namespace is the one every reader of the metrics
		// uses; written out so the node cannot disagree with it (the
		// release's own default is the same value).
		Setting{"instrumentation.namespace", n.Namespace()},
	)
	keys := make([]string, 0, len(n.Config))
	for k := range n.Config {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		set = append(set, Setting{k, n.Config[k]})
	}
	return set, nil
}

// peerList renders node names as "id@addr:port,…".
func peerList(p *plan.Testnet, names []string, ids map[string]string) (string, error) {
	parts := make([]string, 0, len(names))
	if err := eachPeer(p, names, ids, func(id, addr string) { parts = append(parts, id+"@"+addr) }); err != nil {
		return "", err
	}
	return strings.Join(parts, ","), nil
}

// bootstrapPeers renders node names as [p2p.libp2p] bootstrap_peers: one
// inline table per peer, its p2p address and libp2p peer ID, persistent
// (redialled when lost, as persistent_peers are).
func bootstrapPeers(p *plan.Testnet, names []string, ids map[string]string) ([]any, error) {
	out := make([]any, 0, len(names))
	if err := eachPeer(p, names, ids, func(id, addr string) {
		out = append(out, map[string]any{"host": addr, "id": id, "persistent": true})
	}); err != nil {
		return nil, err
	}
	return out, nil
}

// eachPeer calls f with the ID and p2p address of every node named.
func eachPeer(p *plan.Testnet, names []string, ids map[string]string, f func(id, addr string)) error {
	for _, name := range names {
		peer := p.Node(name)
		if peer == nil {
			return fmt.Errorf("no node %q in the testnet", name)
		}
		id, ok := ids[name]
		if !ok {
			return fmt.Errorf("no node ID for %s", name)
		}
		f(id, peer.P2PAddr())
	}
	return nil
}

func configPath(home string) string { return filepath.Join(home, "config", "config.toml") }

// run execs a release command, returning its output in the error.
func run(ctx context.Context, bin string, args ...string) error {
	cmd := exec.CommandContext(ctx, bin, args...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s %s: %w\n%s", bin, strings.Join(args, " "), err, tail(string(out), 20))
	}
	return nil
}

func tail(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return "    " + strings.Join(lines, "\n    ")
}
