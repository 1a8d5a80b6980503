package local

import (
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/benchnet/benchnet/internal/testenv"
)

// TestDeprioritize starts a process group the way Start does and checks
// that its leader and its child run at NodeNice afterwards, whether the
// child was forked before the renice (the whole group is reniced) or after
// (it inherits the value).
func TestDeprioritize(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs root to renice another process")
	}
	cmd := exec.Command("sh", "-c", "sleep 5; true")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	pid := cmd.Process.Pid
	deprioritize(pid)
	if got := nice(t, pid); got != NodeNice {
		t.Fatalf("nice of %d right after deprioritize: %d, want %d", pid, got, NodeNice)
	}
	for range 100 {
		kids, _ := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/task/" + strconv.Itoa(pid) + "/children")
		if f := strings.Fields(string(kids)); len(f) > 0 {
			kid, _ := strconv.Atoi(f[0])
			if got := nice(t, kid); got != NodeNice {
				t.Fatalf("nice of child %d in the group: %d, want %d", kid, got, NodeNice)
			}
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatal("no child forked within 1 s")
}

// nice reads a process's nice value from /proc/PID/stat (field 19).
func nice(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:]) // fields from 3 on
	n, err := strconv.Atoi(f[19-3])
	if err != nil {
		t.Fatal(err)
	}
	return n
}
