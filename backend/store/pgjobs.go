package store

import (
	"context"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Jobs that fire once across servers on PostgreSQL (issue 21). On SQLite one writer
// runs every write, so RunDueJobs re-reading a due job inside its write is enough. With
// several servers on one database, two writers could both read a job as due and both
// run it. So a job is claimed: its row is locked (FOR UPDATE) inside the write that runs
// it and advances its next_run_at, and a row another server's write holds is skipped
// (SKIP LOCKED) rather than waited for: that server is running it. When the holder
// commits, the row's next_run_at is past now, and PostgreSQL re-checks the WHERE clause
// on the newest version of a row it locks, so a claim that comes after the commit does
// not find it due either. If the holder rolls back, the job is still due and the next
// pass claims it (Tx.ClaimDueJob, pgmulti.go).

// dueJobsWhere selects the jobs due at $1 (see neverRun, $2).
const dueJobsWhere = ` WHERE j.next_run_at IS NOT NULL AND j.next_run_at > $2 AND j.next_run_at <= $1`

// claimJob locks, in tx, the project's job id if it is due at now and no other
// transaction holds it; ErrNotFound if it is not due (any more), held (another server is
// running it), or gone. It is RunDueJobs' re-read of a due job, made safe across
// servers: the caller runs the job and advances its next_run_at in the same transaction.
func claimJob(ctx context.Context, tx queryer, projectID string, id int64, now time.Time) (*model.Job, error) {
	j, err := scanJob(tx.QueryRowContext(ctx, `SELECT `+jobColumns+jobFrom+dueJobsWhere+
		` AND j.project_id = $3 AND j.id = $4 FOR UPDATE OF j SKIP LOCKED`, fmtTime(now), neverRun, projectID, id))
	if errors.Is(err, ErrNotFound) {
		return nil, ErrNotFound
	}
	return j, err
}
