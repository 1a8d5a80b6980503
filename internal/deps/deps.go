// Package deps installs the Debian packages benchnet runs on, on demand, so a
// fresh machine with Go and root needs nothing installed by hand.
package deps

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"sync"
)

// Packages maps the commands benchnet execs to the Debian packages that ship them.
var Packages = map[string]string{
	"ip":      "iproute2",
	"tc":      "iproute2",
	"setpriv": "util-linux",
	"nsenter": "util-linux",
	// the multi-engine swarm of the tests (swarmtest): engines in
	// namespaces store images with it on any backing filesystem
	"fuse-overlayfs": "fuse-overlayfs",
	"iptables":       "iptables",
	"ping":           "iputils-ping",
	"chromium":       "chromium",
	"prometheus":     "prometheus",
}

var updateOnce sync.Once
var updateErr error

// Ensure returns the path of each command, installing its package with
// apt-get when it is missing. Progress goes to log.
func Ensure(ctx context.Context, log io.Writer, commands ...string) error {
	var missing []string
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			pkg, ok := Packages[c]
			if !ok {
				return fmt.Errorf("command %s not found and no package is known for it", c)
			}
			missing = append(missing, pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	if os.Geteuid() != 0 {
		return fmt.Errorf("missing Debian packages %v and not root to install them", missing)
	}
	if _, err := exec.LookPath("apt-get"); err != nil {
		return fmt.Errorf("missing packages %v and no apt-get to install them", missing)
	}
	fmt.Fprintf(log, "installing Debian packages %v\n", missing)
	updateOnce.Do(func() { updateErr = aptGet(ctx, log, "update", "-q") })
	if updateErr != nil {
		return updateErr
	}
	args := append([]string{"install", "-y", "-q", "--no-install-recommends"}, missing...)
	if err := aptGet(ctx, log, args...); err != nil {
		return err
	}
	for _, c := range commands {
		if _, err := exec.LookPath(c); err != nil {
			return fmt.Errorf("installed %v but %s is still not on PATH", missing, c)
		}
	}
	return nil
}

func aptGet(ctx context.Context, log io.Writer, args ...string) error {
	cmd := exec.CommandContext(ctx, "apt-get", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get %v: %w", args, err)
	}
	return nil
}
