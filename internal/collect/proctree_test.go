package collect

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// fakeProc writes a /proc entry: utime+stime ticks, VmRSS kB, children.
func fakeProc(t *testing.T, root string, pid, ticks, rssKB int, kids string) {
	t.Helper()
	dir := filepath.Join(root, fmt.Sprint(pid))
	if err := os.MkdirAll(filepath.Join(dir, "task", fmt.Sprint(pid)), 0o755); err != nil {
		t.Fatal(err)
	}
	stat := fmt.Sprintf("%d (node (x)) S 1 1 1 0 -1 0 0 0 0 0 %d %d 0 0 20 0 1 0 0 0 0\n", pid, ticks, 0)
	for name, data := range map[string]string{
		"stat":   stat,
		"status": fmt.Sprintf("Name:\tnode\nVmRSS:\t  %d kB\n", rssKB),
		filepath.Join("task", fmt.Sprint(pid), "children"): kids,
	} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// A wrapped node is its whole tree: the agent (10) with the node (11) and
// the node's own child (13); 12 exited between the listing and its read.
func TestReadProcTree(t *testing.T) {
	root := t.TempDir()
	fakeProc(t, root, 10, 100, 1000, "11 12")
	fakeProc(t, root, 11, 250, 5000, "13")
	fakeProc(t, root, 13, 50, 500, "")
	for _, tc := range []struct {
		pid      int
		cpu      float64
		rssBytes int64
	}{
		{10, 4.0, 6500 * 1024},
		{11, 3.0, 5500 * 1024},
		{13, 0.5, 500 * 1024},
	} {
		p, err := readProcTree(root, tc.pid)
		if err != nil {
			t.Fatal(err)
		}
		if p.CPUSeconds != tc.cpu || p.RSSBytes != tc.rssBytes {
			t.Errorf("tree of %d: cpu %g s rss %d, want %g s %d", tc.pid, p.CPUSeconds, p.RSSBytes, tc.cpu, tc.rssBytes)
		}
	}
	if _, err := readProcTree(root, 12); err == nil {
		t.Error("a process that is gone read without an error")
	}
}

// On this kernel: a child this test starts is in its tree.
func TestReadProcTreeReal(t *testing.T) {
	cmd := exec.Command("sleep", "5")
	if err := cmd.Start(); err != nil {
		t.Skip("no sleep:", err)
	}
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()
	if len(children("/proc", os.Getpid())) == 0 {
		t.Skip("the kernel lists no children (CONFIG_PROC_CHILDREN)")
	}
	self, err := ReadProc(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	tree, err := ReadProcTree(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	kid, err := ReadProc(cmd.Process.Pid)
	if err != nil {
		t.Fatal(err)
	}
	if tree.RSSBytes < self.RSSBytes+kid.RSSBytes/2 {
		t.Errorf("tree RSS %d, want about self %d + child %d", tree.RSSBytes, self.RSSBytes, kid.RSSBytes)
	}
}
