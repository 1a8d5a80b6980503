package linkem

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// agentPushTimeout bounds one push to one agent (its lookups of new node
// names included, which the agent bounds to 2 s).
var agentPushTimeout = 5 * time.Second

// pushClient has no timeout of its own: each push's context bounds it.
var pushClient = &http.Client{}

// pushTarget is a running agent whose table changes.
type pushTarget struct {
	node, ep string
	old, new AgentTable
}

// push sends every running node whose table differs between old and s its
// new table, all at once (a partition takes effect together); if any
// agent fails, the ones changed get their old table back.
func (a *Agents) push(ctx context.Context, old, s *Snapshot) error {
	targets, err := a.pushTargets(old, s)
	if err != nil {
		return err
	}
	errs := pushAll(ctx, targets, func(t pushTarget) AgentTable { return t.new })
	var failed []error
	var changed []pushTarget
	for i, t := range targets {
		if errs[i] != nil {
			failed = append(failed, fmt.Errorf("linkem agent: push links to %s: %w", t.node, errs[i]))
		} else {
			changed = append(changed, t)
		}
	}
	if len(failed) == 0 {
		return nil
	}
	return errors.Join(errors.Join(failed...), rollbackAgents(context.WithoutCancel(ctx), changed))
}

// pushTargets are the nodes that took their table, whose table changes
// and whose agent runs (a stopped node's agent takes its table when it
// starts again), in the model's order.
func (a *Agents) pushTargets(old, s *Snapshot) ([]pushTarget, error) {
	var out []pushTarget
	for i, n := range s.Nodes {
		if !a.taken[n.Name] {
			continue
		}
		t := pushTarget{node: n.Name, new: agentTable(s, i)}
		if j := old.Index(n.Name); j >= 0 {
			t.old = agentTable(old, j)
		}
		if t.old.Rate == t.new.Rate && slices.Equal(t.old.Links, t.new.Links) {
			continue
		}
		if a.cfg.Endpoint == nil {
			return nil, fmt.Errorf("linkem agent: push links to %s: no agent endpoints (AgentsConfig.Endpoint)", n.Name)
		}
		if t.ep = a.cfg.Endpoint(n.Name); t.ep != "" {
			out = append(out, t)
		}
	}
	return out, nil
}

// pushAll puts each target's table (pick) at most 32 at once, and returns
// each one's error.
func pushAll(ctx context.Context, targets []pushTarget, pick func(pushTarget) AgentTable) []error {
	errs := make([]error, len(targets))
	sem := make(chan struct{}, 32)
	var wg sync.WaitGroup
	for i, t := range targets {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = pushTable(ctx, t.ep, pick(t))
		}()
	}
	wg.Wait()
	return errs
}

// rollbackAgents puts the old table back on the agents changed, and says
// whether that worked (ErrRolledBack) or which are left on the new table.
func rollbackAgents(ctx context.Context, changed []pushTarget) error {
	errs := pushAll(ctx, changed, func(t pushTarget) AgentTable { return t.old })
	var mixed []string
	var why []error
	for i, t := range changed {
		if errs[i] != nil {
			mixed = append(mixed, t.node)
			why = append(why, fmt.Errorf("linkem agent: restore links of %s: %w", t.node, errs[i]))
		}
	}
	if len(mixed) > 0 {
		return fmt.Errorf("linkem agent: rollback failed, links are mixed (new table on: %s): %w", strings.Join(mixed, ", "), errors.Join(why...))
	}
	return ErrRolledBack
}

// pushTable puts t to the agent at ep (host:port); an agent's refusal
// comes back with its message.
func pushTable(ctx context.Context, ep string, t AgentTable) error {
	body, err := json.Marshal(t)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, agentPushTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, "http://"+ep+"/links", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := pushClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4<<10))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("agent at %s: %s: %s", ep, resp.Status, strings.TrimSpace(string(msg)))
	}
	return nil
}
