// Package promserver runs an optional real Prometheus server next to a run
// (`benchnet run --prometheus`), so a user can explore every node's metrics
// with PromQL and Grafana while the run is going and afterwards from the
// TSDB left in the run directory. benchnet's own collector (internal/collect)
// stays the source of the report; this server is for people.
//
// Prometheus runs in the root namespace: node addresses are reachable from
// there through the testnet bridge, whose gateway address the harness holds.
//
// Layout inside the run directory:
//
//	prometheus/prometheus.yml   generated config
//	prometheus/data/            TSDB (kept after Stop)
//	prometheus/pid              pid of the running server, for Kill after a crash
//	logs/prometheus.log         server stdout+stderr
package promserver

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/benchnet/benchnet/internal/deps"
	"github.com/benchnet/benchnet/internal/plan"
	"github.com/benchnet/benchnet/internal/rundir"
)

// Paths inside the run directory.
const (
	Dir     = "prometheus"
	Config  = "prometheus.yml"
	Data    = "data"
	PIDFile = "pid"
	LogFile = "prometheus.log" // under rundir.Logs
)

// Tunables; variables so tests can shorten them.
var (
	// ReadyTimeout bounds the wait for /-/ready after exec.
	ReadyTimeout = 60 * time.Second
	// StopGrace is how long Stop waits after SIGTERM before SIGKILL.
	// Prometheus flushes its head block on SIGTERM; give it time.
	StopGrace = 15 * time.Second
	// ScrapeInterval is both the scrape and the evaluation interval.
	ScrapeInterval = time.Second
)

// Target is one node's metrics endpoint.
type Target struct {
	Node string // becomes the node="<Node>" label
	Addr string // host:port, e.g. "10.213.0.2:26660"; scraped at /metrics
	// Labels are extra target labels (role, zone, release …); optional.
	Labels map[string]string
}

// TargetsFromPlan returns one target per node that serves metrics, labelled
// with node, role, zone and release.
func TargetsFromPlan(t *plan.Testnet) []Target {
	var out []Target
	for _, n := range t.Nodes {
		if n.PrometheusPort == 0 {
			continue
		}
		labels := map[string]string{"role": n.Role, "release": n.Release.String()}
		if n.Zone != "" {
			labels["zone"] = n.Zone
		}
		out = append(out, Target{
			Node:   n.Name,
			Addr:   netip.AddrPortFrom(n.Addr, uint16(n.PrometheusPort)).String(),
			Labels: labels,
		})
	}
	return out
}

// Server is one running Prometheus.
type Server struct {
	URL     string // http://127.0.0.1:<port>
	PID     int
	DataDir string
	Config  string

	runDir string
	cmd    *exec.Cmd
	done   chan struct{} // closed when the process has been reaped
}

// Start installs Prometheus if needed, writes its config and starts it
// scraping targets every ScrapeInterval. It returns once /-/ready answers.
// The caller must call Stop; nothing global is registered. ctx bounds the
// start only, not the server's life.
func Start(ctx context.Context, runDir string, targets []Target, log io.Writer) (*Server, error) {
	if log == nil {
		log = io.Discard
	}
	if err := deps.Ensure(ctx, log, "prometheus"); err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	// A leftover from a killed harness on the same run directory would hold
	// the TSDB lock.
	if err := Kill(runDir); err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	dir := filepath.Join(runDir, Dir)
	data := filepath.Join(dir, Data)
	if err := os.MkdirAll(data, 0o755); err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	cfg, err := ConfigYAML(targets)
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	cfgPath := filepath.Join(dir, Config)
	if err := rundir.WriteAtomic(cfgPath, cfg); err != nil {
		return nil, fmt.Errorf("prometheus: write config: %w", err)
	}
	logPath := filepath.Join(runDir, rundir.Logs, LogFile)
	if err := os.MkdirAll(filepath.Dir(logPath), 0o755); err != nil {
		return nil, fmt.Errorf("prometheus: log: %w", err)
	}

	// The free port is found by binding and closing; another process can grab
	// it before Prometheus binds, so retry on an early exit.
	var lastErr error
	for attempt := 0; attempt < 3; attempt++ {
		s, err := start(ctx, runDir, cfgPath, data, logPath)
		if err == nil {
			return s, nil
		}
		lastErr = err
		if !errors.Is(err, errExited) || ctx.Err() != nil {
			break
		}
	}
	return nil, lastErr
}

var errExited = errors.New("prometheus exited before it was ready")

func start(ctx context.Context, runDir, cfgPath, data, logPath string) (*Server, error) {
	port, err := freePort()
	if err != nil {
		return nil, fmt.Errorf("prometheus: %w", err)
	}
	listen := net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, fmt.Errorf("prometheus: log: %w", err)
	}
	defer logf.Close() // the child holds its own copy

	// Not CommandContext: ctx bounds starting, not the server's life.
	cmd := exec.Command("prometheus",
		"--config.file="+cfgPath,
		"--storage.tsdb.path="+data,
		"--web.listen-address="+listen,
		"--web.enable-lifecycle",
	)
	cmd.Dir = filepath.Dir(cfgPath)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Own process group: a terminal ^C goes to the harness, which then stops
	// Prometheus in order instead of both dying at once.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("prometheus: start: %w", err)
	}
	s := &Server{
		URL:     "http://" + listen,
		PID:     cmd.Process.Pid,
		DataDir: data,
		Config:  cfgPath,
		runDir:  runDir,
		cmd:     cmd,
		done:    make(chan struct{}),
	}
	go func() { _ = cmd.Wait(); close(s.done) }()
	pidPath := filepath.Join(runDir, Dir, PIDFile)
	if err := rundir.WriteAtomic(pidPath, []byte(strconv.Itoa(s.PID)+"\n")); err != nil {
		_ = s.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("prometheus: write pid: %w", err)
	}
	if err := s.waitReady(ctx); err != nil {
		_ = s.Stop(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("prometheus: %w (see %s)", err, logPath)
	}
	return s, nil
}

func (s *Server) waitReady(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, ReadyTimeout)
	defer cancel()
	client := &http.Client{Timeout: 2 * time.Second}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.URL+"/-/ready", nil)
		if err != nil {
			return err
		}
		if resp, err := client.Do(req); err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-s.done:
			return fmt.Errorf("%w: %s", errExited, s.cmd.ProcessState)
		case <-ctx.Done():
			return fmt.Errorf("wait for %s/-/ready: %w", s.URL, ctx.Err())
		case <-tick.C:
		}
	}
}

// Stop sends SIGTERM to the server's process group, waits up to StopGrace
// (or ctx) and then sends SIGKILL. The data directory stays. Stopping a
// stopped server is not an error.
func (s *Server) Stop(ctx context.Context) error {
	defer os.Remove(filepath.Join(s.runDir, Dir, PIDFile))
	select {
	case <-s.done:
		return nil
	default:
	}
	if err := syscall.Kill(-s.PID, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("prometheus: stop pid %d: %w", s.PID, err)
	}
	grace := time.NewTimer(StopGrace)
	defer grace.Stop()
	select {
	case <-s.done:
		return nil
	case <-grace.C:
	case <-ctx.Done():
	}
	if err := syscall.Kill(-s.PID, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("prometheus: kill pid %d: %w", s.PID, err)
	}
	<-s.done // SIGKILL cannot be ignored; reaping is immediate
	return fmt.Errorf("prometheus: pid %d did not stop after SIGTERM, killed", s.PID)
}

// Done is closed when the server process has exited.
func (s *Server) Done() <-chan struct{} { return s.done }

// Kill kills a server left running by a harness that died without Stop,
// using the pid file in runDir. It checks that the pid still belongs to a
// prometheus started on this run directory's config before killing, so a
// recycled pid is never hit. No pid file, or a stale one, is not an error.
func Kill(runDir string) error {
	pidPath := filepath.Join(runDir, Dir, PIDFile)
	b, err := os.ReadFile(pidPath)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("kill leftover prometheus: %w", err)
	}
	pid, err := strconv.Atoi(strings.TrimSpace(string(b)))
	if err != nil || pid <= 1 {
		return fmt.Errorf("kill leftover prometheus: bad pid file %s: %q", pidPath, b)
	}
	if !ours(pid, filepath.Join(runDir, Dir, Config)) {
		return os.Remove(pidPath)
	}
	target := pid
	if pgid, err := syscall.Getpgid(pid); err == nil && pgid == pid {
		target = -pid // the whole group Start created
	}
	if err := syscall.Kill(target, syscall.SIGKILL); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("kill leftover prometheus pid %d: %w", pid, err)
	}
	// Wait for the kernel to tear it down (it releases the TSDB lock and the
	// port): until the process is a zombie or gone. An empty cmdline is not
	// enough: the kernel drops the memory map before it closes the files,
	// and the process is still running (state R) in between.
	for deadline := time.Now().Add(5 * time.Second); !exited(pid); {
		if time.Now().After(deadline) {
			return fmt.Errorf("kill leftover prometheus pid %d: still running after SIGKILL", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return os.Remove(pidPath)
}

// exited reports whether pid has finished exiting: a zombie, or gone.
func exited(pid int) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return true
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return strings.HasPrefix(rest, "Z") || strings.HasPrefix(rest, "X")
}

// ours reports whether pid is a live prometheus whose command line names
// cfgPath.
func ours(pid int, cfgPath string) bool {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil || len(b) == 0 {
		return false
	}
	args := strings.Split(strings.TrimRight(string(b), "\x00"), "\x00")
	if !strings.Contains(filepath.Base(args[0]), "prometheus") {
		return false
	}
	abs, err := filepath.Abs(cfgPath)
	if err != nil {
		abs = cfgPath
	}
	return slices.ContainsFunc(args[1:], func(a string) bool {
		v, ok := strings.CutPrefix(a, "--config.file=")
		if !ok {
			return false
		}
		if av, err := filepath.Abs(v); err == nil {
			v = av
		}
		return v == abs
	})
}

// labelName is Prometheus' label name syntax.
var labelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// ConfigYAML renders prometheus.yml: one job "cometbft" with one static
// target per node, labelled node=<name> plus the target's extra labels.
// Strings are written JSON-quoted, which YAML reads as double-quoted scalars,
// so no name can break the file.
func ConfigYAML(targets []Target) ([]byte, error) {
	seen := map[string]bool{}
	for _, t := range targets {
		if t.Node == "" || t.Addr == "" {
			return nil, fmt.Errorf("target %+v: node and addr are required", t)
		}
		if seen[t.Node] {
			return nil, fmt.Errorf("target %q listed twice", t.Node)
		}
		seen[t.Node] = true
		if _, _, err := net.SplitHostPort(t.Addr); err != nil {
			return nil, fmt.Errorf("target %q: addr %q: %w", t.Node, t.Addr, err)
		}
		for k := range t.Labels {
			if k == "node" || !labelName.MatchString(k) || strings.HasPrefix(k, "__") {
				return nil, fmt.Errorf("target %q: bad label name %q", t.Node, k)
			}
		}
	}
	q := func(s string) string { b, _ := json.Marshal(s); return string(b) }
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Generated by benchnet (internal/promserver); edits are overwritten.\n")
	fmt.Fprintf(&b, "global:\n  scrape_interval: %s\n  scrape_timeout: %s\n  evaluation_interval: %s\n",
		promDuration(ScrapeInterval), promDuration(ScrapeInterval), promDuration(ScrapeInterval))
	fmt.Fprintf(&b, "scrape_configs:\n  - job_name: \"cometbft\"\n    metrics_path: \"/metrics\"\n")
	if len(targets) == 0 {
		fmt.Fprintf(&b, "    static_configs: []\n")
	} else {
		fmt.Fprintf(&b, "    static_configs:\n")
	}
	for _, t := range targets {
		fmt.Fprintf(&b, "      - targets: [%s]\n        labels:\n          node: %s\n", q(t.Addr), q(t.Node))
		keys := make([]string, 0, len(t.Labels))
		for k := range t.Labels {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "          %s: %s\n", k, q(t.Labels[k])) // names validated above
		}
	}
	return b.Bytes(), nil
}

// promDuration writes d in Prometheus' duration syntax (ms precision).
func promDuration(d time.Duration) string {
	if d%time.Second == 0 {
		return strconv.FormatInt(int64(d/time.Second), 10) + "s"
	}
	return strconv.FormatInt(d.Milliseconds(), 10) + "ms"
}
