package swarm

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"
)

// followLogs copies the service's output since a moment into path, as a
// child of its own process group (Ctrl-C of the harness must not end it
// before the harness is done).
func followLogs(svc string, since time.Time, path string) *exec.Cmd {
	if path == "" {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil
	}
	defer f.Close()
	cmd := exec.Command("docker", "service", "logs", "--follow", "--raw", "--since", since.UTC().Format(time.RFC3339Nano), svc)
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil
	}
	go func() { _ = cmd.Wait() }()
	return cmd
}

func stopLogs(c *exec.Cmd) {
	if c != nil && c.Process != nil {
		// The engine streams the last lines a moment after the task ended.
		time.AfterFunc(time.Second, func() { _ = c.Process.Kill() })
	}
}

// serviceLogs is the end of a service's output, for errors.
func serviceLogs(svc string) string {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, "docker", "service", "logs", "--raw", "--tail", "15", svc).CombinedOutput()
	if err != nil && len(out) == 0 {
		return ""
	}
	return "last lines of " + svc + ":\n    " + strings.ReplaceAll(strings.TrimSpace(string(out)), "\n", "\n    ")
}
