// Package dockercli drives Docker engines through the docker CLI (an
// argument list, never a shell): which engine a command goes to, and what
// every container runner needs of an engine (removal by label). The
// docker and swarm runners share it instead of importing each other.
package dockercli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// Engine is one Docker engine as the CLI reaches it: the default one (the
// zero value), a DOCKER_HOST value (Host) or a docker context (Context).
type Engine struct {
	Host    string `json:"host,omitempty"`
	Context string `json:"context,omitempty"`
}

// Default is the engine the CLI reaches without flags.
var Default = Engine{}

// String names the engine for messages and state files.
func (e Engine) String() string {
	switch {
	case e.Host != "":
		return e.Host
	case e.Context != "":
		return "context " + e.Context
	}
	return "the default engine"
}

// IsDefault reports whether e is the CLI's default engine.
func (e Engine) IsDefault() bool { return e.Host == "" && e.Context == "" }

// Args are the CLI's global flags selecting e.
func (e Engine) Args() []string {
	switch {
	case e.Host != "":
		return []string{"-H", e.Host}
	case e.Context != "":
		return []string{"--context", e.Context}
	}
	return nil
}

// Command is an exec.Cmd of the docker CLI against e.
func (e Engine) Command(ctx context.Context, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, "docker", append(e.Args(), args...)...)
}

// Cmd runs the docker CLI against e; the error carries its stderr.
func (e Engine) Cmd(ctx context.Context, args ...string) ([]byte, error) {
	cmd := e.Command(ctx, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		where := ""
		if !e.IsDefault() {
			where = " (" + e.String() + ")"
		}
		return out, fmt.Errorf("docker %s%s: %w: %s", strings.Join(args[:min(len(args), 2)], " "), where, err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// Cmd runs the docker CLI against the default engine.
func Cmd(ctx context.Context, args ...string) ([]byte, error) { return Default.Cmd(ctx, args...) }

// NoSuch reports an engine error about an object that does not exist
// ("No such container", or "network … not found" when a worker engine
// removed an overlay between the listing and the removal).
func NoSuch(err error) bool {
	if err == nil {
		return false
	}
	e := strings.ToLower(err.Error())
	return strings.Contains(e, "no such") || strings.Contains(e, "not found")
}

// Available reports whether the docker CLI is installed and e answers
// `docker version`.
func (e Engine) Available(ctx context.Context) bool {
	if _, err := exec.LookPath("docker"); err != nil {
		return false
	}
	_, err := e.Cmd(ctx, "version", "--format", "{{.Server.Version}}")
	return err == nil
}

// SwarmActive reports whether e is a node of an active swarm.
func (e Engine) SwarmActive(ctx context.Context) bool {
	out, err := e.Cmd(ctx, "info", "--format", "{{.Swarm.LocalNodeState}}")
	return err == nil && strings.TrimSpace(string(out)) == "active"
}

func (e Engine) list(ctx context.Context, args ...string) ([]string, error) {
	out, err := e.Cmd(ctx, args...)
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// RemoveLabelled removes every service (on a swarm manager), container,
// network and volume of e that carries label (KEY=VALUE, or KEY for any
// value). Containers get grace to end on SIGTERM.
func (e Engine) RemoveLabelled(ctx context.Context, label string, grace time.Duration) error {
	var errs []error
	// Services first: their tasks' containers carry the label too, and a
	// container removed under a live service is only replaced or reported.
	if e.SwarmActive(ctx) {
		svcs, err := e.list(ctx, "service", "ls", "--quiet", "--filter", "label="+label)
		if err != nil && !strings.Contains(err.Error(), "not a swarm manager") {
			errs = append(errs, err)
		}
		if len(svcs) > 0 {
			if _, err := e.Cmd(ctx, append([]string{"service", "rm"}, svcs...)...); err != nil && !NoSuch(err) {
				errs = append(errs, fmt.Errorf("remove services: %w", err))
			}
			// The engine stops their tasks asynchronously (SIGTERM, then the
			// stop grace): wait for the containers to go.
			deadline := time.Now().Add(grace + 30*time.Second)
			for time.Now().Before(deadline) {
				left, err := e.list(ctx, "ps", "--all", "--quiet", "--filter", "label="+label)
				if err != nil || len(left) == 0 {
					break
				}
				time.Sleep(500 * time.Millisecond)
			}
		}
	}
	ids, err := e.list(ctx, "ps", "--all", "--quiet", "--filter", "label="+label)
	if err != nil {
		errs = append(errs, err)
	}
	nets, err := e.list(ctx, "network", "ls", "--quiet", "--filter", "label="+label)
	if err != nil {
		errs = append(errs, err)
	}
	if len(ids) > 0 {
		if _, err := e.Cmd(ctx, append([]string{"stop", "--time", strconv.Itoa(int(grace.Seconds()))}, ids...)...); err != nil && !NoSuch(err) {
			errs = append(errs, fmt.Errorf("stop containers: %w", err))
		}
		// Disconnect before removing: engine 20.10 removing many containers
		// at once was seen to leave a network's endpoint count stale, and
		// then the network cannot be removed until the daemon restarts.
		for _, n := range nets {
			for _, id := range ids {
				_, _ = e.Cmd(ctx, "network", "disconnect", "--force", n, id)
			}
		}
		if _, err := e.Cmd(ctx, append([]string{"rm", "--force", "--volumes"}, ids...)...); err != nil && !NoSuch(err) {
			errs = append(errs, fmt.Errorf("remove containers: %w", err))
		}
	}
	for _, n := range nets {
		// A service's tasks can hold an overlay for a moment after rm.
		var err error
		for try := 0; try < 20; try++ {
			if _, err = e.Cmd(ctx, "network", "rm", n); err == nil || NoSuch(err) {
				err = nil
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove network %s: %w", n, err))
		}
	}
	vols, err := e.list(ctx, "volume", "ls", "--quiet", "--filter", "label="+label)
	if err != nil {
		errs = append(errs, err)
	}
	if len(vols) > 0 {
		// A volume stays in use for a moment after its container went.
		var err error
		for try := 0; try < 20; try++ {
			if _, err = e.Cmd(ctx, append([]string{"volume", "rm", "--force"}, vols...)...); err == nil {
				break
			}
			time.Sleep(500 * time.Millisecond)
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("remove volumes: %w", err))
		}
	}
	return errors.Join(errs...)
}

// Labelled lists what of e carries label (KEY=VALUE): services (on a
// swarm manager), containers, networks, volumes, configs and secrets, as
// "container 3f2a…" lines for a leftovers report.
func (e Engine) Labelled(ctx context.Context, label string) ([]string, error) {
	type kind struct {
		name  string
		args  []string
		swarm bool
	}
	var left []string
	var errs []error
	swarm := e.SwarmActive(ctx)
	for _, k := range []kind{
		{"service", []string{"service", "ls"}, true},
		{"container", []string{"ps", "--all"}, false},
		{"network", []string{"network", "ls"}, false},
		{"volume", []string{"volume", "ls"}, false},
		{"config", []string{"config", "ls"}, true},
		{"secret", []string{"secret", "ls"}, true},
	} {
		if k.swarm && !swarm {
			continue
		}
		ids, err := e.list(ctx, append(k.args, "--quiet", "--filter", "label="+label)...)
		if err != nil {
			if !strings.Contains(err.Error(), "not a swarm manager") {
				errs = append(errs, fmt.Errorf("%s: %w", e, err))
			}
			continue
		}
		for _, id := range ids {
			left = append(left, k.name+" "+id+e.suffix())
		}
	}
	return left, errors.Join(errs...)
}

// suffix names a non-default engine after what it lists.
func (e Engine) suffix() string {
	if e.IsDefault() {
		return ""
	}
	return " on " + e.String()
}

// FillVolume creates volume name (labelled) on e holding a copy of the
// host directory src at target (copyVolume, `docker cp --archive` in:
// owners kept).
func (e Engine) FillVolume(ctx context.Context, name, label, image, entrypoint, src, target string) error {
	if _, err := e.Cmd(ctx, "volume", "create", "--driver", "local", "--label", label, name); err != nil {
		return fmt.Errorf("volume %s on %s: %w", name, e, err)
	}
	return e.copyVolume(ctx, name, label, image, entrypoint, target, func(id string) error {
		if _, err := e.Cmd(ctx, "cp", "--archive", src+"/.", id+":"+target); err != nil {
			return fmt.Errorf("copy %s into volume %s on %s: %w", src, name, e, err)
		}
		return nil
	})
}

// CopyFromVolume copies what volume name on e holds at target into the
// host directory dst, FillVolume's way back. A volume e does not hold is
// no error: the task ran elsewhere.
func (e Engine) CopyFromVolume(ctx context.Context, name, label, image, entrypoint, target, dst string) error {
	if _, err := e.Cmd(ctx, "volume", "inspect", "--format", "{{.Name}}", name); err != nil {
		if NoSuch(err) {
			return nil
		}
		return fmt.Errorf("volume %s on %s: %w", name, e, err)
	}
	return e.copyVolume(ctx, name, label, image, entrypoint, target, func(id string) error {
		if _, err := e.Cmd(ctx, "cp", id+":"+target+"/.", dst); err != nil {
			return fmt.Errorf("copy volume %s on %s back to %s: %w", name, e, dst, err)
		}
		return nil
	})
}

// copyVolume runs cp on a container of image that mounts volume name at
// target (created, never started: a FROM-scratch image has no copier, and
// needs none; entrypoint is any program of the image, as create wants
// one), then removes the container.
func (e Engine) copyVolume(ctx context.Context, name, label, image, entrypoint, target string, cp func(id string) error) error {
	out, err := e.Cmd(ctx, "create", "--label", label, "--network", "none", "--entrypoint", entrypoint,
		"--mount", "type=volume,source="+name+",target="+target+",volume-nocopy=true", image)
	if err != nil {
		return fmt.Errorf("volume %s on %s: %w", name, e, err)
	}
	id := strings.TrimSpace(string(out))
	cerr := cp(id)
	if _, err := e.Cmd(ctx, "rm", "--force", "--volumes=false", id); err != nil && cerr == nil {
		return fmt.Errorf("volume %s on %s: %w", name, e, err)
	}
	return cerr
}

// HasImage reports whether e holds the image ref.
func (e Engine) HasImage(ctx context.Context, ref string) bool {
	_, err := e.Cmd(ctx, "image", "inspect", "--format", "{{.Id}}", ref)
	return err == nil
}

// CopyImage loads the image ref from the default engine into e (docker save
// | docker load, through both engines' APIs; no registry), unless e has it.
func (e Engine) CopyImage(ctx context.Context, ref string) error {
	if e.IsDefault() || e.HasImage(ctx, ref) {
		return nil
	}
	save := Default.Command(ctx, "save", ref)
	load := e.Command(ctx, "load", "--quiet")
	pipe, err := save.StdoutPipe()
	if err != nil {
		return err
	}
	var saveErr, loadErr bytes.Buffer
	save.Stderr = &saveErr
	load.Stdin, load.Stderr = pipe, &loadErr
	if err := save.Start(); err != nil {
		return fmt.Errorf("docker save %s: %w", ref, err)
	}
	lerr := load.Run()
	serr := save.Wait()
	if serr != nil {
		return fmt.Errorf("docker save %s: %w: %s", ref, serr, strings.TrimSpace(saveErr.String()))
	}
	if lerr != nil {
		return fmt.Errorf("load %s into %s: %w: %s", ref, e, lerr, strings.TrimSpace(loadErr.String()))
	}
	return nil
}
