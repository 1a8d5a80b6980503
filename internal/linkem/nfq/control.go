package nfq

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/benchnet/benchnet/internal/linkem"
)

// Handler serves the agent's port: its counters as Prometheus text (/,
// /metrics), its lateness record line (/lateness), and its control
// endpoint /links: GET the table in force, PUT a whole new one
// (linkem.AgentTable as JSON), answered with the table then in force (200)
// or why it was refused (400 unreadable, 422 not applicable; the old table
// stays).
func (a *Agent) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("/", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; version=0.0.4")
		_ = a.WriteMetrics(w)
	})
	// The lateness histogram at full resolution, as a line of the run's
	// linkem/lateness.jsonl (the harness merges every agent's).
	mux.HandleFunc("/lateness", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		s := a.Sample()
		_ = json.NewEncoder(w).Encode(&s)
	})
	mux.HandleFunc("/links", func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet:
			writeTable(w, a.Table())
		case http.MethodPut:
			a.putLinks(w, r)
		default:
			w.Header().Set("Allow", "GET, PUT")
			http.Error(w, "linkem-agent: /links takes GET or PUT", http.StatusMethodNotAllowed)
		}
	})
	return mux
}

// maxTableBytes bounds a PUT /links body (a 1000-node table is ~60 kB).
const maxTableBytes = 4 << 20

func (a *Agent) putLinks(w http.ResponseWriter, r *http.Request) {
	tb, err := readTable(r.Body)
	if err != nil {
		http.Error(w, "linkem-agent: "+err.Error(), http.StatusBadRequest)
		return
	}
	now, err := a.SetTable(r.Context(), tb)
	if err != nil {
		http.Error(w, "linkem-agent: "+err.Error(), http.StatusUnprocessableEntity)
		return
	}
	writeTable(w, now)
}

// readTable decodes and parses a PUT /links body.
func readTable(body io.Reader) (Table, error) {
	dec := json.NewDecoder(io.LimitReader(body, maxTableBytes))
	dec.DisallowUnknownFields()
	var wt linkem.AgentTable
	if err := dec.Decode(&wt); err != nil {
		return Table{}, fmt.Errorf("links: want {\"links\": [\"NAME=DST,delay=…\", …], \"rate\": \"…\"}: %w", err)
	}
	if dec.More() {
		return Table{}, errors.New("links: one table per request")
	}
	if wt.Links == nil {
		// An empty list is a table (every link unconditioned); a missing
		// one is more likely a mistake than a heal.
		return Table{}, errors.New(`links: no "links" (an empty list [] conditions nothing)`)
	}
	tb, err := ParseTable(wt)
	if err != nil {
		return Table{}, fmt.Errorf("links: %w", err)
	}
	return tb, nil
}

func writeTable(w http.ResponseWriter, tb Table) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(tb.Wire())
}
