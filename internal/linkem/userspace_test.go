package linkem_test

import (
	"context"
	"net/netip"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/testenv"

	"github.com/benchnet/benchnet/internal/linkem"
	"github.com/benchnet/benchnet/internal/linkem/linkemtest"
)

// oneWay are the measurement test's one-way delays between its three
// nodes, each in its own zone.
var oneWay = map[[2]string]time.Duration{
	{"a", "b"}: 10 * time.Millisecond,
	{"a", "c"}: 25 * time.Millisecond,
	{"b", "c"}: 40 * time.Millisecond,
}

func delayOf(x, y string) time.Duration {
	if d, ok := oneWay[[2]string{x, y}]; ok {
		return d
	}
	return oneWay[[2]string{y, x}]
}

func needRoot(t *testing.T) {
	t.Helper()
	testenv.NeedRoot(t) // network namespaces and TAP devices
	testenv.NeedCommand(t, "ping", "iputils-ping")
}

// TestUserspaceMeasured runs the switch between three real namespaces and
// measures what it emulates: RTT per pair, loss on one link, the egress rate
// of one node.
func TestUserspaceMeasured(t *testing.T) {
	needRoot(t)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Second)
	defer cancel()

	eps := []linkem.Endpoint{
		{Name: "a", Zone: "za", Addr: netip.MustParseAddr("10.213.251.2")},
		{Name: "b", Zone: "zb", Addr: netip.MustParseAddr("10.213.251.3")},
		{Name: "c", Zone: "zc", Addr: netip.MustParseAddr("10.213.251.4")},
	}
	m, err := linkem.New(eps, nil, func(x, y linkem.Endpoint) linkem.Link {
		return linkem.Link{Delay: delayOf(x.Name, y.Name)}
	}, 1)
	if err != nil {
		t.Fatal(err)
	}
	u, err := linkem.NewUserspace(linkem.UserspaceConfig{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := u.Close(); err != nil {
			t.Errorf("close switch: %v", err)
		}
	})
	lab, err := linkemtest.Setup(ctx, u, eps, 24)
	if lab != nil {
		t.Cleanup(func() {
			if err := lab.Close(); err != nil {
				t.Errorf("delete namespaces: %v", err)
			}
		})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := u.Apply(ctx, m); err != nil {
		t.Fatal(err)
	}
	ns := lab.Netns
	addr := map[string]string{"a": "10.213.251.2", "b": "10.213.251.3", "c": "10.213.251.4"}

	t.Run("rtt", func(t *testing.T) {
		// The median is asserted: on a shared 2-core machine a few replies
		// wait for a CPU, which moves the mean but not the median; the mean
		// is logged next to it.
		for _, pr := range [][2]string{{"a", "b"}, {"a", "c"}, {"b", "c"}, {"c", "a"}} {
			ping(ctx, t, ns[pr[0]], addr[pr[1]], "-c", "1", "-W", "2") // ARP first
			r := ping(ctx, t, ns[pr[0]], addr[pr[1]], "-c", "20", "-i", "0.05")
			want := 2 * delayOf(pr[0], pr[1])
			t.Logf("%s→%s: rtt median %v avg %v min %v max %v (%d replies); configured 2×%v = %v",
				pr[0], pr[1], r.median(), r.avg, r.min, r.max, len(r.rtts), want/2, want)
			if r.received != 20 {
				t.Errorf("%s→%s: %d of 20 replies", pr[0], pr[1], r.received)
			}
			if diff := r.median() - want; diff < -2*time.Millisecond || diff > 2*time.Millisecond {
				t.Errorf("%s→%s: rtt median %v, want %v ± 2ms", pr[0], pr[1], r.median(), want)
			}
			if r.min < want {
				t.Errorf("%s→%s: rtt min %v shorter than the configured %v", pr[0], pr[1], r.min, want)
			}
		}
	})

	t.Run("loss", func(t *testing.T) {
		if err := m.SetLink("a", "b", linkem.Link{Delay: 10 * time.Millisecond, Loss: 0.10}); err != nil {
			t.Fatal(err)
		}
		if err := u.Apply(ctx, m); err != nil {
			t.Fatal(err)
		}
		before := stats(u, "a").DroppedLoss
		// Preload keeps 8 probes in flight: without it iputils slows to
		// ~10 ms per probe once replies go missing.
		const n = 2000
		r := ping(ctx, t, ns["a"], addr["b"], "-q", "-c", strconv.Itoa(n), "-i", "0.002", "-l", "8", "-W", "1")
		lost := r.sent - r.received
		pct := 100 * float64(lost) / float64(r.sent)
		dropped := stats(u, "a").DroppedLoss - before
		t.Logf("a→b loss 10%%: %d of %d pings lost = %.2f%%; switch dropped %d frames a→b", lost, r.sent, pct, dropped)
		if r.sent != n || pct < 8 || pct > 12 {
			t.Errorf("loss %.2f%% over %d pings, want 8–12%%", pct, r.sent)
		}
		if dropped < uint64(lost) || dropped > uint64(lost)+5 {
			t.Errorf("switch counted %d loss drops for %d lost pings", dropped, lost)
		}
		m.Heal()
		if err := u.Apply(ctx, m); err != nil {
			t.Fatal(err)
		}
	})

	t.Run("rate", func(t *testing.T) {
		if err := m.SetRate("c", 1_000_000); err != nil {
			t.Fatal(err)
		}
		if err := u.Apply(ctx, m); err != nil {
			t.Fatal(err)
		}
		bin := buildTCPBench(t)
		srv := exec.CommandContext(ctx, "ip", "netns", "exec", ns["a"], bin, "-listen", addr["a"]+":5201", "-skip", "1s")
		var out strings.Builder
		srv.Stdout, srv.Stderr = &out, &out
		if err := srv.Start(); err != nil {
			t.Fatal(err)
		}
		time.Sleep(200 * time.Millisecond)
		cli, err := linkemtest.Output(ctx, "ip", "netns", "exec", ns["c"], bin, "-connect", addr["a"]+":5201", "-for", "7s")
		if err != nil {
			t.Fatalf("client: %v", err)
		}
		if err := srv.Wait(); err != nil {
			t.Fatalf("server: %v: %s", err, out.String())
		}
		mbps, err := strconv.ParseFloat(strings.Fields(out.String())[0], 64)
		if err != nil {
			t.Fatalf("server said %q", out.String())
		}
		st := stats(u, "c")
		t.Logf("c egress 1mbit: TCP goodput c→a %.3f Mbit/s (server after 1s warm-up; client %s); c queue drops %d", mbps, strings.TrimSpace(cli), st.DroppedQueue)
		if mbps < 0.9 || mbps > 1.05 {
			t.Errorf("goodput %.3f Mbit/s, want 0.9–1.05", mbps)
		}
	})

	var b strings.Builder
	if err := u.WriteMetrics(&b); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"# TYPE benchnet_linkem_sent_packets_total counter",
		`benchnet_linkem_dropped_loss_packets_total{port="a"} `,
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("metrics lack %q:\n%s", want, b.String())
		}
	}
}

func stats(u *linkem.Userspace, port string) linkem.PortStats {
	for _, s := range u.Stats() {
		if s.Port == port {
			return s
		}
	}
	return linkem.PortStats{}
}

type pingResult struct {
	sent, received int
	min, avg, max  time.Duration
	rtts           []time.Duration // per reply, unless -q/-f
}

func (r pingResult) median() time.Duration {
	if len(r.rtts) == 0 {
		return r.avg
	}
	s := slices.Clone(r.rtts)
	slices.Sort(s)
	return s[len(s)/2]
}

var (
	pingCounts = regexp.MustCompile(`(\d+) packets transmitted, (\d+) received`)
	pingRTT    = regexp.MustCompile(`rtt min/avg/max/mdev = ([\d.]+)/([\d.]+)/([\d.]+)/`)
	pingReply  = regexp.MustCompile(`time=([\d.]+) ms`)
)

// ping runs iputils ping in a namespace; lost replies make ping exit 1,
// so the summary is parsed whatever the status.
func ping(ctx context.Context, t *testing.T, ns, dst string, args ...string) pingResult {
	t.Helper()
	argv := append([]string{"ip", "netns", "exec", ns, "ping", "-n"}, args...)
	out, err := linkemtest.Output(ctx, append(argv, dst)...)
	c := pingCounts.FindStringSubmatch(out)
	if c == nil {
		t.Fatalf("ping: %v\n%s", err, out)
	}
	var r pingResult
	r.sent, _ = strconv.Atoi(c[1])
	r.received, _ = strconv.Atoi(c[2])
	ms := func(s string) time.Duration {
		f, _ := strconv.ParseFloat(s, 64)
		return time.Duration(f * float64(time.Millisecond))
	}
	if m := pingRTT.FindStringSubmatch(out); m != nil {
		r.min, r.avg, r.max = ms(m[1]), ms(m[2]), ms(m[3])
	}
	for _, m := range pingReply.FindAllStringSubmatch(out, -1) {
		r.rtts = append(r.rtts, ms(m[1]))
	}
	return r
}

// tcpBench is a bulk TCP sender and a receiver that reports goodput in
// Mbit/s from the first byte after -skip to EOF.
const tcpBench = `package main

import (
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"time"
)

func main() {
	listen := flag.String("listen", "", "")
	connect := flag.String("connect", "", "")
	skip := flag.Duration("skip", time.Second, "")
	dur := flag.Duration("for", 5*time.Second, "")
	flag.Parse()
	if *listen != "" {
		ln, err := net.Listen("tcp", *listen)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		c, err := ln.Accept()
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
		buf := make([]byte, 1<<16)
		start := time.Now()
		var t0, t1 time.Time
		var n int64
		for {
			k, err := c.Read(buf)
			now := time.Now()
			if now.Sub(start) >= *skip {
				if t0.IsZero() {
					t0 = now
				} else {
					n += int64(k)
					t1 = now
				}
			}
			if err == io.EOF {
				break
			}
			if err != nil {
				fmt.Println(err)
				os.Exit(1)
			}
		}
		fmt.Printf("%.4f %d bytes in %v\n", float64(n)*8/t1.Sub(t0).Seconds()/1e6, n, t1.Sub(t0))
		return
	}
	c, err := net.Dial("tcp", *connect)
	if err != nil {
		fmt.Println(err)
		os.Exit(1)
	}
	buf := make([]byte, 1<<14)
	end := time.Now().Add(*dur)
	var n int64
	for time.Now().Before(end) {
		k, err := c.Write(buf)
		n += int64(k)
		if err != nil {
			fmt.Println(err)
			os.Exit(1)
		}
	}
	c.Close()
	fmt.Printf("sent %d bytes\n", n)
}
`

func buildTCPBench(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for name, body := range map[string]string{"go.mod": "module tcpbench\n\ngo 1.24\n", "main.go": tcpBench} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	bin := filepath.Join(dir, "tcpbench")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("build tcp bench: %v\n%s", err, out)
	}
	return bin
}
