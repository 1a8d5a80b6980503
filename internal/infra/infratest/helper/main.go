// Command helper is the process the runner suite (internal/infra/infratest)
// starts on a node's host: a static binary of the standard library only, so
// that every runner can run it (a container image FROM scratch included).
//
//	helper exit N [D]  exits with status N, after D (a Go duration; at once without)
//	helper tick        prints "tick I" every 20 ms until it is signalled
package main

import (
	"fmt"
	"os"
	"strconv"
	"time"
)

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: helper exit N [D] | helper tick")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "exit":
		code := 1
		if len(os.Args) > 2 {
			code, _ = strconv.Atoi(os.Args[2])
		}
		if len(os.Args) > 3 {
			d, err := time.ParseDuration(os.Args[3])
			if err != nil {
				fmt.Fprintf(os.Stderr, "helper: %v\n", err)
				os.Exit(2)
			}
			fmt.Println("exiting in", d)
			time.Sleep(d)
		}
		os.Exit(code)
	case "tick":
		for i := 0; ; i++ {
			fmt.Println("tick", i)
			time.Sleep(20 * time.Millisecond)
		}
	}
	fmt.Fprintf(os.Stderr, "helper: unknown mode %q\n", os.Args[1])
	os.Exit(2)
}
