package store

import (
	"context"
	"fmt"

	"github.com/agentdesk/agentdesk/backend/store/postgres"
)

// Project locks on PostgreSQL, where concurrent writes (of one server or several)
// share one database.
//
// Event seqs need them: a sequence alone is not enough, since a write that took seq 7
// may commit before the one that took 6, and a subscriber that has read 7 then never
// sees 6. So a write takes a transaction-scoped advisory lock of its project before it
// reads the project's last seq, and keeps it to its commit: the next write of the
// project, from any server, waits until then, so one project's seqs become visible in
// order. (PostgreSQL releases a transaction's locks after its commit is visible.)
//
// Taken before the write runs (pgTransaction.begin), the lock also keeps two writes of
// a project from locking its hot rows (its task_counts, its tasks, its projects row) in
// different orders: the second waits, holding nothing, until the first has committed.
// A write names its project in its Author (Store.Write; the service's author does it
// for every change made for a principal of a project). A write that says none takes the
// lock only when it appends the project's first event (Tx.projectSeq); it can then meet
// another write in a cycle, and PostgreSQL fails one of them (errDeadlock).

// lockProject takes the project's lock for the rest of the write, unless the write
// holds it already. SQLite has one writer: nothing to do.
func (t *Tx) lockProject(ctx context.Context, projectID string) error {
	p := t.b.postgres
	if p == nil || p.holds(projectID) {
		return nil
	}
	if _, err := t.b.q.ExecContext(ctx, postgres.LockProjectSQL(projectID)); err != nil {
		return fmt.Errorf("lock project: %w", err)
	}
	p.locked[projectID] = notRead
	return nil
}
