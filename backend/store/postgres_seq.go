package store

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"slices"
)

// Event seqs on PostgreSQL, where several servers write to one database. A sequence
// alone is not enough: a batch that took seq 7 may commit before the one that took 6,
// and a subscriber that has read 7 then never sees 6. So a batch numbers its events only
// at its end (flushEvents), under a transaction-scoped advisory lock per project: the
// next batch of the same project, from any server, waits for the commit before it reads
// the last seq, so one project's seqs become visible in order. (PostgreSQL releases a
// transaction's locks after its commit is visible.) flushEvents (numberEvents) takes them.

// seqLockKey is the advisory lock key of a project's event seq. Two projects whose keys
// collide only wait for each other.
func seqLockKey(projectID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("agentdesk.event_seq:"))
	h.Write([]byte(projectID))
	return int64(h.Sum64())
}

// lockEventSeqs takes the event seq locks of the projects inside tx, in the order of
// their keys (so that two batches never wait for each other in a cycle), and returns
// each project's last seq, read after its lock is held.
func lockEventSeqs(ctx context.Context, tx queryer, projects []string) (map[string]int64, error) {
	keys := make([]int64, 0, len(projects))
	for _, p := range projects {
		keys = append(keys, seqLockKey(p))
	}
	slices.Sort(keys)
	keys = slices.Compact(keys)
	for _, k := range keys {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock($1)`, k); err != nil {
			return nil, fmt.Errorf("lock event seq: %w", err)
		}
	}
	// Read committed: this statement sees the last seq of the batch that held the lock.
	rows, err := tx.QueryContext(ctx, `SELECT id, event_seq FROM projects WHERE id = ANY($1)`, projects)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	last := make(map[string]int64, len(projects))
	for rows.Next() {
		var id string
		var seq int64
		if err := rows.Scan(&id, &seq); err != nil {
			return nil, err
		}
		last[id] = seq
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, p := range projects {
		if _, ok := last[p]; !ok {
			return nil, fmt.Errorf("event of unknown project %q: %w", p, ErrNotFound)
		}
	}
	return last, nil
}

// lastEventSeqLocked is LastEventSeq on PostgreSQL, where the batch numbers its events
// only as it commits: it takes the project's seq lock now (the batch keeps it to its
// commit, so no other server's batch numbers events of the project meanwhile), and adds
// the events this batch has counted so far. Taking a lock mid-batch, out of key order,
// can deadlock with another server's batch; PostgreSQL then cancels one of them with
// 40P01, and its writes fail with errDeadlock. Creating a webhook is rare enough.
func (t *Tx) lastEventSeqLocked(ctx context.Context, projectID string) (int64, error) {
	last, err := lockEventSeqs(ctx, t.q, []string{projectID})
	if err != nil {
		if errors.Is(err, ErrNotFound) {
			return 0, ErrNotFound
		}
		return 0, err
	}
	return last[projectID] + t.b.seqs[projectID], nil
}
