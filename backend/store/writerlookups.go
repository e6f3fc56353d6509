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
// Only rows that exist are cached: a missing agent is an error path and a new agent
// cannot make a cached answer wrong. The tests compare every hit with the database
// (VerifyWrittenTasks).
type writerLookups struct {
	agents  map[agentIDKey]model.Agent
	budgets map[string]*model.Budget // nil: the project has no budget
}

type agentIDKey struct {
	projectID string
	id        int64
}

// maxWriterLookups bounds each map; past it, the map starts over.
const maxWriterLookups = 1024

func (l *writerLookups) clear() {
	clear(l.agents)
	clear(l.budgets)
}

func (l *writerLookups) empty() bool { return len(l.agents) == 0 && len(l.budgets) == 0 }

// lookupsCached says whether this write may use and fill the cache.
func (t *Tx) lookupsCached() bool { return !t.lookupsChanged }

// Agent loads an agent of the project by id, as Reader.Agent does.
func (t *Tx) Agent(ctx context.Context, projectID string, id int64) (*model.Agent, error) {
	l := &t.b.written.lookups
	key := agentIDKey{projectID, id}
	if a, ok := l.agents[key]; ok && t.lookupsCached() {
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
	if err == nil && t.lookupsCached() {
		if l.agents == nil || len(l.agents) >= maxWriterLookups {
			l.agents = make(map[agentIDKey]model.Agent)
		}
		l.agents[key] = *a
	}
	return a, err
}

// Budget loads the project's budget, as Reader.Budget does (ErrNotFound when it has none).
func (t *Tx) Budget(ctx context.Context, projectID string) (*model.Budget, error) {
	l := &t.b.written.lookups
	if b, ok := l.budgets[projectID]; ok && t.lookupsCached() {
		if err := verifyLookup(b, func() (*model.Budget, error) {
			stored, err := t.Reader.Budget(ctx, projectID)
			if errors.Is(err, ErrNotFound) {
				return nil, nil
			}
			return stored, err
		}); err != nil {
			return nil, err
		}
		if b == nil {
			return nil, ErrNotFound
		}
		copied := *b
		return &copied, nil
	}
	b, err := t.Reader.Budget(ctx, projectID)
	if (err == nil || errors.Is(err, ErrNotFound)) && t.lookupsCached() {
		if l.budgets == nil || len(l.budgets) >= maxWriterLookups {
			l.budgets = make(map[string]*model.Budget)
		}
		var cached *model.Budget
		if b != nil {
			copied := *b
			cached = &copied
		}
		l.budgets[projectID] = cached
	}
	return b, err
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
