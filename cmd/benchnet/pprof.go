package main

import (
	"fmt"
	"os"
	"runtime/pprof"
)

// ProfileEnv names a file to write the harness's CPU profile to, for the
// whole command (`go tool pprof -top benchnet FILE`): a developer's tool, so
// an environment variable rather than a flag.
const ProfileEnv = "BENCHNET_CPUPROFILE"

// startProfile starts the CPU profile ProfileEnv asks for; stop writes it.
func startProfile() (stop func()) {
	path := os.Getenv(ProfileEnv)
	if path == "" {
		return func() {}
	}
	f, err := os.Create(path)
	if err == nil {
		err = pprof.StartCPUProfile(f)
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", ProfileEnv, err)
		return func() {}
	}
	return func() { pprof.StopCPUProfile(); f.Close() }
}
