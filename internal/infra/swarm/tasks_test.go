package swarm

import (
	"encoding/json"
	"testing"
)

// TestTaskState reads listings as `docker inspect --type task` prints them
// (newest task first): a running task is found behind a newer one, an
// ended one is an error, and a waiting one says what it waits on, so the
// error of a task that never runs names its state and the scheduler's
// reason.
func TestTaskState(t *testing.T) {
	cases := []struct {
		name, listing string
		running       bool
		waiting, err  string
	}{
		{"none yet", `[]`, false, "no task yet", ""},
		{"running", `[{"ID":"t1","NodeID":"n1","Status":{"State":"running","ContainerStatus":{"ContainerID":"c1","PID":42},"PortStatus":{"Ports":[{"TargetPort":26657,"PublishedPort":30001}]}}}]`,
			true, "", ""},
		{"running behind a newer pending one", `[{"ID":"t2","Status":{"State":"pending","Message":"pending task scheduling"}},{"ID":"t1","NodeID":"n1","Status":{"State":"running","ContainerStatus":{"PID":7}}}]`,
			true, "", ""},
		{"preparing", `[{"ID":"t1","NodeID":"0123456789abcdefghij","Status":{"State":"preparing","Message":"preparing"}}]`,
			false, "preparing on swarm node 0123456789ab: preparing", ""},
		{"unplaceable", `[{"ID":"t1","Status":{"State":"pending","Message":"pending task scheduling","Err":"no suitable node (scheduling constraints not satisfied on 3 nodes)"}}]`,
			false, "pending: pending task scheduling: no suitable node (scheduling constraints not satisfied on 3 nodes)", ""},
		{"failed", `[{"ID":"t1","Status":{"State":"failed","Err":"task: non-zero exit (1)"}}]`,
			false, "", "task of svc failed: task: non-zero exit (1)"},
		{"rejected", `[{"ID":"t1","Status":{"State":"rejected","Err":"invalid mount config"}}]`,
			false, "", "task of svc rejected: invalid mount config"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var ts []taskStatus
			if err := json.Unmarshal([]byte(c.listing), &ts); err != nil {
				t.Fatal(err)
			}
			info, running, waiting, err := taskState("svc", ts)
			if c.err != "" {
				if err == nil || err.Error() != c.err {
					t.Fatalf("err %v, want %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if running != c.running || waiting != c.waiting {
				t.Fatalf("running %v waiting %q, want %v %q", running, waiting, c.running, c.waiting)
			}
			if running && (info.ID != "t1" || info.PID == 0) {
				t.Fatalf("running task %+v, want t1 with its pid", info)
			}
			if c.name == "running" && (info.ContainerID != "c1" || len(info.Ports) != 1 || info.Ports[0].PublishedPort != 30001) {
				t.Fatalf("running task %+v: container or ports lost", info)
			}
		})
	}
}
