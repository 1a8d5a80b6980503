package gossipsub

import (
	"context"
	"fmt"
	"net/http"
	"strconv"
	"time"

	"github.com/benchnet/benchnet/internal/node"
	"github.com/benchnet/benchnet/internal/plan"
)

var _ node.Statuser = (*Driver)(nil)

// StatusColumns are what `benchnet status` shows of a gossipsub host
// (node.Statuser).
func (d *Driver) StatusColumns() []string {
	return []string{"PEERS", "IN_TOPIC", "PUBLISHED", "TRACED"}
}

// Status asks host n's control endpoint for its state: planned neighbours
// connected, peers in the topic, messages published and trace events
// written (with the tracer's drops).
func (d *Driver) Status(ctx context.Context, n *plan.Node) ([]string, error) {
	st, err := GetReady(ctx, &http.Client{Timeout: 2 * time.Second}, n)
	if err != nil {
		return nil, err
	}
	traced := strconv.FormatInt(st.Traced, 10)
	if st.Dropped > 0 {
		traced += fmt.Sprintf(" (%d dropped)", st.Dropped)
	}
	return []string{fmt.Sprintf("%d/%d", st.Connected, st.Planned), strconv.Itoa(st.Topic), strconv.FormatInt(st.Published, 10), traced}, nil
}
