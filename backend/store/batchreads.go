package store

import (
	"context"
	"strings"

	"github.com/agentdesk/agentdesk/backend/model"
)

// A write batch keeps the agents and budgets its writes look up, for its later writes:
// creating a task reads its agent and its project's budget, and on PostgreSQL each of
// those reads is a network round trip inside the batch, while no other write can run
// (creates +40% in interleaved runs on PostgreSQL, docs/postgres.md).
//
// What may change a kept row while the batch runs:
//   - A statement of the batch itself. Every statement a write runs passes through
//     forgetChangedBy first (Reader.statementContext), which forgets everything unless
//     the statement cannot change an agent or a budget: a SELECT, a savepoint, or an
//     INSERT or UPDATE that names neither table. (No trigger writes either table, and
//     only a DELETE cascades.) A write rolled back to its savepoint forgets too.
//   - Another process. On SQLite none can write while the batch holds the write lock.
//     On PostgreSQL another server changes a project's agents and budget only in a batch
//     holding the project's lock, which this batch holds from its first write in the
//     project to its commit (postgres_seq.go). An agent's last contact (last_seen_at) is
//     the exception: it may be a few milliseconds old, as if read as the batch began.
type keptRows struct {
	agents  map[keptAgent]model.Agent
	budgets map[string]*model.Budget // nil: the project has no budget
}

type keptAgent struct {
	project string
	id      int64
}

// forgetChangedBy forgets every kept row unless query (whose first word is verb)
// cannot change one.
func (k *keptRows) forgetChangedBy(verb, query string) {
	if k == nil || (k.agents == nil && k.budgets == nil) {
		return
	}
	switch {
	case strings.EqualFold(verb, "SELECT"), strings.EqualFold(verb, "SAVEPOINT"), strings.EqualFold(verb, "RELEASE"):
		return
	case strings.EqualFold(verb, "INSERT"), strings.EqualFold(verb, "UPDATE"):
		if !strings.Contains(query, "agents") && !strings.Contains(query, "budgets") {
			return
		}
	}
	k.agents, k.budgets = nil, nil
}

// Agent loads an agent of the project, as Reader.Agent does, once per batch.
func (t *Tx) Agent(ctx context.Context, projectID string, id int64) (*model.Agent, error) {
	k := t.b.kept
	if a, ok := k.agents[keptAgent{projectID, id}]; ok {
		return copyAgent(a), nil
	}
	a, err := t.Reader.Agent(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	if k.agents == nil {
		k.agents = map[keptAgent]model.Agent{}
	}
	k.agents[keptAgent{projectID, id}] = *copyAgent(*a)
	return a, nil
}

func copyAgent(a model.Agent) *model.Agent {
	if a.LastSeenAt != nil {
		at := *a.LastSeenAt
		a.LastSeenAt = &at
	}
	return &a
}

// Budget loads the project's budget, as Reader.Budget does, once per batch.
func (t *Tx) Budget(ctx context.Context, projectID string) (*model.Budget, error) {
	k := t.b.kept
	if b, ok := k.budgets[projectID]; ok {
		if b == nil {
			return nil, ErrNotFound
		}
		c := *b
		return &c, nil
	}
	b, err := t.Reader.Budget(ctx, projectID)
	var keep *model.Budget
	switch {
	case err == nil:
		c := *b
		keep = &c
	case err != ErrNotFound:
		return nil, err
	}
	if k.budgets == nil {
		k.budgets = map[string]*model.Budget{}
	}
	k.budgets[projectID] = keep
	return b, err
}
