package dockercli

import (
	"errors"
	"testing"
)

func TestNoSuch(t *testing.T) {
	for msg, want := range map[string]bool{
		"docker kill: exit status 1: Error response from daemon: No such container: abc":                   true,
		"docker network rm: exit status 1: Error response from daemon: network 71xiw03fvcy5 not found":     true,
		"docker network rm: exit status 1: Error response from daemon: error while removing network: busy": false,
	} {
		if got := NoSuch(errors.New(msg)); got != want {
			t.Errorf("NoSuch(%q) = %v, want %v", msg, got, want)
		}
	}
	if NoSuch(nil) {
		t.Error("NoSuch(nil)")
	}
}

func TestEngineArgs(t *testing.T) {
	for _, tc := range []struct {
		e    Engine
		args string
		name string
	}{
		{Default, "", "the default engine"},
		{Engine{Host: "unix:///run/w1/docker.sock"}, "-H unix:///run/w1/docker.sock", "unix:///run/w1/docker.sock"},
		{Engine{Context: "w2"}, "--context w2", "context w2"},
	} {
		got := ""
		for i, a := range tc.e.Args() {
			if i > 0 {
				got += " "
			}
			got += a
		}
		if got != tc.args || tc.e.String() != tc.name || tc.e.IsDefault() != (tc.args == "") {
			t.Errorf("%+v: args %q name %q default %v", tc.e, got, tc.e.String(), tc.e.IsDefault())
		}
	}
}
