package dockercli

import (
	"context"
	"crypto/sha256"
	"debug/elf"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/infra/proctable"
	"github.com/benchnet/benchnet/internal/infra/statefile"
)

// Label marks every engine object of a run (containers, services, networks,
// volumes); its value is the run id. The docker and swarm runners share it.
const Label = "benchnet.run"

var tagRe = regexp.MustCompile(`[^a-z0-9._-]+`)

// EnsureImage builds (or finds) benchnet/<release>:<binary>-<hash>, FROM
// scratch with binary at its absolute host path and an empty /tmp; extra
// binaries (the benchnet binary whose link agent wraps a node) go in at
// their own absolute paths too.
func EnsureImage(ctx context.Context, binary string, extra ...string) (string, error) {
	var abss []string
	// The image holds each binary at its own path: the path is part of
	// the key, or one binary copied to two paths would share an image
	// that has it at the first path only.
	h := sha256.New()
	for _, b := range append([]string{binary}, extra...) {
		abs, err := filepath.Abs(b)
		if err != nil {
			return "", err
		}
		f, err := os.Open(abs)
		if err != nil {
			return "", fmt.Errorf("image of %s: %w", abs, err)
		}
		h.Write([]byte(abs + "\x00"))
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return "", fmt.Errorf("image of %s: %w", abs, err)
		}
		if err := checkStatic(abs); err != nil {
			return "", err
		}
		if !slices.Contains(abss, abs) {
			abss = append(abss, abs)
		}
	}
	abs := abss[0]
	release := tagRe.ReplaceAllString(strings.ToLower(filepath.Base(filepath.Dir(abs))), "-")
	tool := tagRe.ReplaceAllString(strings.ToLower(filepath.Base(abs)), "-")
	ref := "benchnet/" + strings.Trim(release, "-._") + ":" + tool + "-" + hex.EncodeToString(h.Sum(nil))[:12]
	if _, err := Cmd(ctx, "image", "inspect", "--format", "{{.Id}}", ref); err == nil {
		return ref, nil
	}
	dir, err := os.MkdirTemp("", "benchnet-image-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	df := "FROM scratch\n"
	for i, a := range abss {
		name := "bin" + strconv.Itoa(i)
		// A hard link when the cache is on the same filesystem, else a copy.
		if err := os.Link(a, filepath.Join(dir, name)); err != nil {
			if err := copyFile(a, filepath.Join(dir, name)); err != nil {
				return "", fmt.Errorf("image of %s: %w", a, err)
			}
		}
		df += fmt.Sprintf("COPY %s %s\n", name, jsonString(a))
	}
	if err := os.Mkdir(filepath.Join(dir, "tmp"), 0o1777); err != nil {
		return "", err
	}
	df += "COPY tmp /tmp\nLABEL benchnet.image=1\n"
	if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
		return "", err
	}
	if _, err := Cmd(ctx, "build", "--quiet", "--tag", ref, dir); err != nil {
		return "", fmt.Errorf("build image %s: %w", ref, err)
	}
	return ref, nil
}

// jsonString quotes a path for a Dockerfile instruction (its JSON form
// would need the array syntax; a plain path without spaces is enough).
func jsonString(p string) string {
	b, _ := json.Marshal(p)
	return strings.Trim(string(b), `"`)
}

// checkStatic refuses a dynamically linked binary: FROM scratch has no
// loader, and an ELF with an interpreter (PT_INTERP) needs one.
func checkStatic(path string) error {
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("image of %s: %w", path, err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return fmt.Errorf("%s is dynamically linked: a FROM scratch image needs a static binary (build with CGO_ENABLED=0)", path)
		}
	}
	return nil
}

func copyFile(src, dst string) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

// Down ends a run from its state file: it asks a live owning harness to end
// it first (SIGTERM), then removes every container, network and volume
// labelled with the run id, whatever the file still records (teardown
// does the removing; it gets the state file as re-read after the harness
// ended). Shared by the docker and swarm runners.
func Down(ctx context.Context, statePath string, log io.Writer, grace time.Duration, teardown func(context.Context, *statefile.File) error) error {
	if log == nil {
		log = io.Discard
	}
	s, err := statefile.Read(statePath)
	if err != nil {
		return err
	}
	if h := s.Doc.Harness; h != nil && h.PID != os.Getpid() && proctable.Alive(h.PID, h.StartTime) {
		fmt.Fprintf(log, "run %s belongs to benchnet pid %d: asking it to end the run\n", s.Doc.RunID, h.PID)
		if err := syscall.Kill(h.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
			return fmt.Errorf("ask benchnet pid %d to end run %s: %w", h.PID, s.Doc.RunID, err)
		}
		if !proctable.WaitGone(ctx, h.PID, h.StartTime, grace) {
			fmt.Fprintf(log, "benchnet pid %d still running after %s: removing run %s from under it\n", h.PID, grace, s.Doc.RunID)
		}
		if s, err = statefile.Read(statePath); err != nil {
			return err
		}
	}
	return teardown(ctx, s)
}

// HarnessGrace is how long Down waits for a live harness to end its run.
const HarnessGrace = 90 * time.Second

// Teardown removes every engine object labelled with the run id (containers,
// then networks and volumes), then what extra removes (nil: nothing), and
// when all of that went well forgets the run: clears and saves the state
// file and drops it from the registry of live runs.
func Teardown(ctx context.Context, s *statefile.File, grace time.Duration, extra func(*statefile.File) error) error {
	errs := Default.RemoveLabelled(ctx, Label+"="+s.Doc.RunID, grace)
	if extra != nil {
		if err := extra(s); err != nil {
			errs = errors.Join(errs, err)
		}
	}
	if errs == nil {
		s.Clear()
		if err := s.Save(); err != nil {
			errs = err
		} else if err := proctable.Unregister(s.Doc.RunID); err != nil {
			errs = err
		}
	}
	return errs
}
