package release

import (
	"bytes"
	"context"
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"time"
)

var versionOutRE = regexp.MustCompile(`^v?([0-9]+\.[0-9]+\.[0-9]+(?:-[0-9A-Za-z.-]+)?)`)

// resolveFile probes a prebuilt binary: executable, answers `version`, its
// flavour from `go version -m` (or its help text), static or not.
func resolveFile(ctx context.Context, ref Ref, path string) (*Resolved, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", ref.Raw, err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("%q: %s is not a regular file (a source tree is path:%s)", ref.Raw, path, path)
	}
	if st.Mode()&0o111 == 0 {
		return nil, fmt.Errorf("%q: %s is not executable (mode %s)", ref.Raw, path, st.Mode().Perm())
	}
	out, err := probe(ctx, path, "version")
	if err != nil {
		return nil, fmt.Errorf("%q: %s does not answer `version`: %w", ref.Raw, path, err)
	}
	m := versionOutRE.FindStringSubmatch(strings.TrimSpace(out))
	if m == nil {
		return nil, fmt.Errorf("%q: %s does not answer `version` with a version (printed %q)", ref.Raw, path, firstLine(strings.TrimSpace(out)))
	}
	version := "v" + m[1]
	sum, err := FileSHA256(path)
	if err != nil {
		return nil, fmt.Errorf("%q: %w", ref.Raw, err)
	}
	static, _ := IsStatic(path) // not ELF (a script): not static either
	flavour, module, how := fileFlavour(ctx, path)
	rel := Release{Name: flavour, Version: version + "+file." + sum[:16], Source: "file:" + path}
	lines := []string{
		"reference: " + ref.Raw,
		"kind: file",
		"file: " + path,
		"version: " + version + " (`version` printed " + firstLine(strings.TrimSpace(out)) + ")",
		"flavour: " + flavour + " (" + how + ")",
	}
	if module != "" {
		lines = append(lines, "module: "+module)
	}
	lines = append(lines, "source.sha256: "+sum, fmt.Sprintf("static: %t", static))
	return &Resolved{Ref: ref, Release: rel, Module: module, Info: lines, Static: static}, nil
}

func probe(ctx context.Context, path string, args ...string) (string, error) {
	pctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	cmd := exec.CommandContext(pctx, path, args...)
	cmd.Dir = os.TempDir()
	cmd.Env = append(os.Environ(), "HOME="+os.TempDir())
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if pctx.Err() != nil {
			return "", fmt.Errorf("no answer within 10s")
		}
		if said := firstLine(strings.TrimSpace(stderr.String() + stdout.String())); said != "" {
			return "", fmt.Errorf("%w: %s", err, said)
		}
		return "", err
	}
	return stdout.String() + stderr.String(), nil
}

// fileFlavour tells cometbft from tendermint: `go version -m`'s main
// package path (…/cmd/tendermint), else the help text's name.
func fileFlavour(ctx context.Context, path string) (flavour, module, how string) {
	if out, err := exec.CommandContext(ctx, goCmd, "version", "-m", path).Output(); err == nil {
		for _, line := range strings.Split(string(out), "\n") {
			f := strings.Fields(line)
			if len(f) >= 2 && f[0] == "mod" {
				module = f[1]
			}
			if len(f) >= 2 && f[0] == "path" {
				if strings.HasSuffix(f[1], "/cmd/tendermint") {
					flavour = "tendermint"
				} else if strings.HasSuffix(f[1], "/cmd/cometbft") {
					flavour = "cometbft"
				}
			}
		}
		if flavour != "" {
			return flavour, module, "go version -m: main package cmd/" + flavour
		}
	}
	if out, err := probe(ctx, path, "--help"); err == nil && strings.Contains(out, "Tendermint") && !strings.Contains(out, "CometBFT") {
		return "tendermint", module, "--help names Tendermint"
	}
	return "cometbft", module, "default"
}

// IsStatic reports whether an ELF binary runs without a dynamic loader (no
// PT_INTERP, no dynamic section): what a container without libc needs.
func IsStatic(path string) (bool, error) {
	f, err := elf.Open(path)
	if err != nil {
		return false, fmt.Errorf("%s is not an ELF binary: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
			return false, nil
		}
	}
	return f.Section(".dynamic") == nil, nil
}
