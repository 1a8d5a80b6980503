package manifest_test

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/manifest"
	"github.com/benchnet/benchnet/internal/plan"
)

// brokenSeeds are manifests with one or more problems each, so the fuzzer
// starts from both sides of every rule.
var brokenSeeds = []string{
	"[node.validator]\ncount = 0\nrelease = \"cometbft@1.0\"\n[load]\nrate = 0\n",
	"[node.validator]\ncount = 1\n[load]\nrate = nan\nramp_from = inf\nshape = \"ramp\"\n",
	"[node.validator]\ncount = 3000\n[load]\nsize = 2000000000\n",
	"[network]\njitter = \"banana\"\nloss = \"2\"\nbandwidth = \"10MBps\"\n[node.validator]\ncount = 1\n",
	"[network]\nzones = \"aws\"\n[node.validator]\ncount = 2\n",
	"[network]\nzones = \"bad.csv\"\n[node.validator]\ncount = 2\nzone = \"a\"\n",
	"[network]\nzones = \"zones.csv\"\ntopology = \"random\"\npeers = 2\n[node.validator]\ncount = 5\nzone = \"random\"\n[node.full]\ncount = 2\nzones = [\"a\", \"b\"]\n",
	"[node.validator]\ncount = 1\n[load]\nshape = \"ramp\"\ncount = 100\n",
	"[node.validator\ncount = 1\n",
	"node = { validator = { count = 1, colour = 1 } }\n",
	"[[node]]\ncount = 1\n",
	"[node.validator]\ncount = 1\n[node.validator.config]\n\"p2p\" = { a = 1 }\n\"x\" = [[1]]\n",
	"seed = -1\n[network]\ntopology = \"random\"\n[node.validator]\ncount = 4\n[node.seed]\ncount = 1\n",
	"[load]\nduration = \"-1s\"\nwarmup = \"9999h\"\nconnections = -1\ncount = -5\n",
	"name = \"\\u0000\"\n[node.validator]\ncount = 1\nzones = [\"\", \" \"]\n",
	"[node.g]\nkind = \"gossipsub\"\ncount = 2\n[gossipsub]\nd = 1\nfanout = 1\n[publish]\nsource = \"g9\"\n",
	"[node.validator]\ncount = 1\n[gossipsub]\nd = \"x\"\n[publish]\nrate = 1\n",
}

// FuzzManifest: whatever the bytes, Parse does not panic; it returns either
// a manifest that resolves into a plan, the same plan twice, or errors that
// each name this file and a line in it.
func FuzzManifest(f *testing.F) {
	examples, err := filepath.Glob("../../examples/*.toml")
	if err != nil || len(examples) == 0 {
		f.Fatalf("no examples: %v", err)
	}
	for _, ex := range examples {
		data, err := os.ReadFile(ex)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	for _, s := range brokenSeeds {
		f.Add([]byte(s))
	}
	dir := f.TempDir()
	for name, data := range map[string]string{
		"zones.csv": "From/to,a,b,c\na,0,10,20\nb,10,0,30\nc,20,30,0\n",
		"bad.csv":   "From/to,a,b\na,0,ten\n",
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			f.Fatal(err)
		}
	}
	file := filepath.Join(dir, "fuzz.toml")

	f.Fuzz(func(t *testing.T, data []byte) {
		done := make(chan struct{})
		defer close(done)
		go func() {
			select {
			case <-done:
			case <-time.After(10 * time.Second): // a hang (e.g. a blocking open) is a finding too
				panic(fmt.Sprintf("WATCHDOG slow input: %q", data))
			}
		}()
		m, err := manifest.Parse(file, data)
		if err != nil {
			checkErrors(t, file, data, err)
			return
		}
		manifest.CheckReleasesOffline(m) // commit, tree and file references are resolved before planning
		a, err := resolveJSON(m)
		if err != nil {
			t.Fatalf("valid manifest does not resolve: %v\n%s", err, data)
		}
		b, err := resolveJSON(m)
		if err != nil || !bytes.Equal(a, b) {
			t.Fatalf("two resolutions differ (%v)\n%s", err, data)
		}
	})
}

func resolveJSON(m *manifest.Manifest) ([]byte, error) {
	tn, err := plan.Resolve(m)
	if err != nil {
		return nil, err
	}
	if len(tn.Nodes) > manifest.MaxNodes {
		return nil, fmt.Errorf("%d nodes passed validation", len(tn.Nodes))
	}
	return tn.JSON()
}

func checkErrors(t *testing.T, file string, data []byte, err error) {
	t.Helper()
	var errs manifest.Errors
	if !errors.As(err, &errs) || len(errs) == 0 {
		t.Fatalf("error is not manifest.Errors: %T %v\n%q", err, err, data)
	}
	lines := bytes.Count(data, []byte("\n")) + 1
	for _, e := range errs {
		if strings.Contains(e.Msg, manifest.DecoderPanic) {
			t.Fatalf("decoder panic: %v\nmanifest: %q", e, data)
		}
		prefix := fmt.Sprintf("%s:%d: ", file, e.Line)
		if e.File != file || e.Line < 1 || e.Line > lines || !strings.HasPrefix(e.Error(), prefix) {
			t.Fatalf("error without a line of the file (%d lines): %q\nmanifest: %q", lines, e.Error(), data)
		}
	}
}

// The built-in zone sets' names live in the manifest (for validation) and
// their coordinates in linkem (for delays): the two lists must agree.
func TestBuiltinZoneNames(t *testing.T) {
	for name, zones := range manifest.BuiltinZoneSets {
		mx, ok := linkem.Builtin(name)
		if !ok {
			t.Errorf("%s: not a linkem built-in", name)
			continue
		}
		if !slices.Equal(mx.Zones, zones) {
			t.Errorf("%s: manifest zones %v, linkem zones %v", name, zones, mx.Zones)
		}
	}
}
