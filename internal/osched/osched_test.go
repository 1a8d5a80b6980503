package osched

import (
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/benchnet/benchnet/internal/testenv"
)

// threadNice reads a thread's nice value from /proc (field 19 of stat).
func threadNice(t *testing.T, tid string) int {
	t.Helper()
	b, err := os.ReadFile("/proc/self/task/" + tid + "/stat")
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	n, err := strconv.Atoi(f[16]) // field 19 counted from the state (field 3)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestRaiseProcess(t *testing.T) {
	if os.Geteuid() != 0 {
		testenv.Skip(t, "needs CAP_SYS_NICE (root) to lower a nice value back")
	}
	before, err := Nice()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = RaiseProcess(before) })
	for _, want := range []int{before - 3, before} {
		if err := RaiseProcess(want); err != nil {
			t.Fatal(err)
		}
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			if got := threadNice(t, task.Name()); got != want {
				t.Errorf("thread %s nice %d, want %d", task.Name(), got, want)
			}
		}
		if got, _ := Nice(); got != want {
			t.Errorf("Nice() = %d, want %d", got, want)
		}
	}
}
