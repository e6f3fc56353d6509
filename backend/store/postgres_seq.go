package store

import (
	"context"
	"fmt"
	"hash/fnv"
	"strconv"
)

// Project locks on PostgreSQL, where several servers write to one database.
//
// Event seqs need them: a sequence alone is not enough, since a batch that took seq 7
// may commit before the one that took 6, and a subscriber that has read 7 then never
// sees 6. So a batch takes a transaction-scoped advisory lock of a project before it
// reads the project's last seq, and keeps it to its commit: the next batch of the
// project, from any server, waits until then, so one project's seqs become visible in
// order. (PostgreSQL releases a transaction's locks after its commit is visible.)
//
// Deadlocks need them too. A batch holds the row locks of all its writes until it
// commits; two servers' batches writing to one project would lock that project's hot
// rows (its task_counts, its tasks, its projects row) in different orders, and
// PostgreSQL would cancel one of them. So a write of a project takes the project's
// lock before it runs (batch.run): a second server's batch waits there, holding
// nothing of the project, until the first has committed. A write names its
// project in its Author (Store.Write; the service's author does it for every change
// made for a principal of a project). A write that says none takes the lock only when it
// appends the project's first event of the batch (Tx.projectSeq); it can still meet
// another batch in a cycle, and then fails alone with errDeadlock.

// projectLockKey is the advisory lock key of a project. Two projects whose keys
// collide only wait for each other.
func projectLockKey(projectID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("agentdesk.event_seq:"))
	h.Write([]byte(projectID))
	return int64(h.Sum64())
}

// lockProjectSQL takes a project's lock until the transaction ends (Tx.lockProject;
// batch.beginPostgres sends the same lock with its key as a parameter).
func lockProjectSQL(projectID string) string {
	return "SELECT pg_advisory_xact_lock(" + strconv.FormatInt(projectLockKey(projectID), 10) + ")"
}

// lockProject takes the project's lock for the rest of the batch, unless the batch
// holds it already. SQLite has one writer: nothing to do.
func (t *Tx) lockProject(ctx context.Context, projectID string) error {
	if !t.pg || t.b.holdsLock(projectID) {
		return nil
	}
	if _, err := t.b.q.ExecContext(ctx, lockProjectSQL(projectID)); err != nil {
		return fmt.Errorf("lock project: %w", err)
	}
	t.b.locked[projectID] = notRead
	return nil
}
