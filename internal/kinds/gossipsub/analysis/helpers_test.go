package analysis

import (
	"fmt"
	"strings"
)

// fmtSscan reads the index of a gossiptest name ("host3" -> 3).
func fmtSscan(name string, i *int) (int, error) {
	return fmt.Sscan(strings.TrimPrefix(name, "host"), i)
}
