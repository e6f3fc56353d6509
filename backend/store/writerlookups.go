package store

import (
	"context"
	"errors"
	"fmt"
	"reflect"

	"github.com/agentdesk/agentdesk/backend/model"
)

// writerLookups keeps, for the writer alone, the rows a task's creation looks up: the
// assigned agent and the project's budget (usually none). Each is one indexed row, yet
// a query through database/sql and the driver costs ~15 µs in the single writer, most
// of it outside SQLite; at thousands of creates a second the two lookups were a fifth
// of the writer's time.
//
// Like writtenTasks, whose life it shares (emptied with it on another connection's
// commit and on a failed batch), it follows the writer's transaction:
//   - a write that changes an agent or a budget (Tx.lookupsChanged: UpdateAgentProfile,
//     DeleteAgent, SetBudget, MarkBudgetExceeded) reads from the database for the rest
//     of the write, and empties the cache when it ends;
//   - a write that fails empties it too, as it may have cached what its rollback undid.
//
// A missing agent is not kept (an error path; a new agent cannot make a kept answer
// wrong); a project without a budget is, since setting one marks the change. The tests
// compare every hit with the database (VerifyWrittenTasks).
type writerLookups struct {
	agents  map[agentIDKey]model.Agent
	budgets map[string]budgetLookup
}

type agentIDKey struct {
	projectID string
	id        int64
}

// budgetLookup is a project's budget, or that it has none.
type budgetLookup struct {
	budget model.Budget
	found  bool
}

// maxWriterLookups bounds each map; past it, the map starts over.
const maxWriterLookups = 1024

// keep puts v in m, making m (or a new one, once m is full) as needed.
func keep[K comparable, V any](m *map[K]V, k K, v V) {
	if *m == nil || len(*m) >= maxWriterLookups {
		*m = make(map[K]V)
	}
	(*m)[k] = v
}

func (l *writerLookups) clear() {
	clear(l.agents)
	clear(l.budgets)
}

func (l *writerLookups) empty() bool { return len(l.agents) == 0 && len(l.budgets) == 0 }

// Agent loads an agent of the project by id, as Reader.Agent does.
func (t *Tx) Agent(ctx context.Context, projectID string, id int64) (*model.Agent, error) {
	l := &t.b.written.lookups
	key := agentIDKey{projectID, id}
	if a, ok := l.agents[key]; ok && !t.lookupsChanged {
		if err := verifyLookup(a, func() (model.Agent, error) {
			stored, err := t.Reader.Agent(ctx, projectID, id)
			if err != nil {
				return model.Agent{}, err
			}
			return *stored, nil
		}); err != nil {
			return nil, err
		}
		return &a, nil
	}
	a, err := t.Reader.Agent(ctx, projectID, id)
	if err == nil && !t.lookupsChanged {
		keep(&l.agents, key, *a)
	}
	return a, err
}

// Budget loads the project's budget, as Reader.Budget does (ErrNotFound when it has none).
func (t *Tx) Budget(ctx context.Context, projectID string) (*model.Budget, error) {
	l := &t.b.written.lookups
	if cached, ok := l.budgets[projectID]; ok && !t.lookupsChanged {
		if err := verifyLookup(cached, func() (budgetLookup, error) { return t.loadBudget(ctx, projectID) }); err != nil {
			return nil, err
		}
		if !cached.found {
			return nil, ErrNotFound
		}
		return &cached.budget, nil
	}
	loaded, err := t.loadBudget(ctx, projectID)
	if err != nil {
		return nil, err
	}
	if !t.lookupsChanged {
		keep(&l.budgets, projectID, loaded)
	}
	if !loaded.found {
		return nil, ErrNotFound
	}
	return &loaded.budget, nil
}

func (t *Tx) loadBudget(ctx context.Context, projectID string) (budgetLookup, error) {
	b, err := t.Reader.Budget(ctx, projectID)
	if errors.Is(err, ErrNotFound) {
		return budgetLookup{}, nil
	}
	if err != nil {
		return budgetLookup{}, err
	}
	return budgetLookup{budget: *b, found: true}, nil
}

// verifyLookup compares a cache hit with the database when the tests ask for it.
func verifyLookup[T any](cached T, load func() (T, error)) error {
	if !VerifyWrittenTasks {
		return nil
	}
	stored, err := load()
	if err != nil {
		return fmt.Errorf("verify the writer's cached lookup: %w", err)
	}
	if !reflect.DeepEqual(cached, stored) {
		return fmt.Errorf("the writer's cached lookup differs from the database:\ncached %+v\nstored %+v", cached, stored)
	}
	return nil
}
