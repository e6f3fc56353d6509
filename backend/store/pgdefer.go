package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// On PostgreSQL a create's INSERT was a round trip of its own, waited for only to learn
// the new task's id: most of what a create cost the writer (docs/postgres.md). So a
// write inserts a task of a project whose lock the batch holds with an id it takes
// beforehand, and the INSERT waits, deferred, for the batch's next round trip: the
// next statement of any write (deferringConn), the next write's savepoint, the next
// ids taken, or the COMMIT. A batch of creates sends its INSERTs together. So do a
// task's UPDATEs and a message added to its conversation (deferOneRowUpdate says how
// an UPDATE that changes no row is still found), and a task's load sends what waits
// with its two SELECTs (deferringConn.task).
//
// Ids. The batch takes them from the tasks' sequence under the project's lock, for one
// project, as many at a time as writes are waiting (taskID); what the batch leaves
// unused is skipped. Since a project's tasks are inserted under its lock, their ids
// still follow the order their batches commit in, across servers. One write at a time
// takes one id at a time: ids skip numbers only under load.
//
// Failures. A deferred INSERT that PostgreSQL refuses is found in a later round trip,
// which may belong to another write, and leaves the transaction unusable. The batch
// then rolls back and every write of it goes back to the queue, to run again (Write
// allows that); the write whose INSERT was refused runs carefully, with no deferring
// and in a savepoint of its own, so that the refusal is its answer and no one else's.

// deferredStatement is a write's statement whose answer no one waits for.
type deferredStatement struct {
	query string // PostgreSQL's text
	args  []any
	job   *job
	// Or, for tasks inserted one after another, by one write or several: their rows,
	// which go as one INSERT (insertTasksStatement).
	tasks *taskRows
}

// errRestart says that a deferred statement was refused: the batch starts again
// (batch.restart).
var errRestart = errors.New("a deferred statement was refused: the batch runs again")

// queueDeferred adds the batch's deferred statements to q, first, and forgets them.
// Call check with the round trip's error: it notes the write whose statement was
// refused, if one was, in b.refused.
func (b *batch) queueDeferred(q *pgx.Batch) (check func(error)) {
	deferred := b.deferred
	b.deferred = nil
	answered := 0
	for _, d := range deferred {
		if d.tasks != nil {
			d.query, d.args = insertTasksStatement, d.tasks.args()
		}
		q.Queue(d.query, d.args...).Exec(func(pgconn.CommandTag) error { answered++; return nil })
	}
	return func(err error) {
		if err != nil && answered < len(deferred) {
			if d := deferred[answered]; d.tasks != nil {
				b.refused = d.tasks.jobs
			} else {
				b.refused = []*job{d.job}
			}
		}
	}
}

// flushDeferred sends the deferred statements, if any, in one round trip.
func (b *batch) flushDeferred(ctx context.Context) error {
	if len(b.deferred) == 0 {
		return nil
	}
	q := &pgx.Batch{}
	check := b.queueDeferred(q)
	err := b.sendTogether(ctx, q)
	check(err)
	return err
}

// rolledBack forgets what a rollback undid: the deferred statements, and the ids taken
// under locks it may have released.
func (b *batch) rolledBack() {
	b.deferred = nil
	b.taskIDs = nil
}

// taskID gives an id for a new task of a project whose lock the batch holds. When the
// batch has none left for the project, it takes as many as writes are waiting, plus
// one, in the round trip that sends the deferred statements.
func (b *batch) taskID(ctx context.Context, projectID string) (int64, error) {
	if ids := b.taskIDs[projectID]; len(ids) > 0 {
		b.taskIDs[projectID] = ids[1:]
		return ids[0], nil
	}
	n := min(1+b.waiting(), maxIDsTaken)
	q := &pgx.Batch{}
	check := b.queueDeferred(q)
	var ids []int64
	q.Queue(`SELECT nextval(pg_get_serial_sequence('tasks', 'id')) FROM generate_series(1, $1)`, n).Query(func(rows pgx.Rows) error {
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				return err
			}
			ids = append(ids, id)
		}
		return rows.Err()
	})
	err := b.sendTogether(ctx, q)
	check(err)
	if err != nil {
		return 0, err
	}
	if b.taskIDs == nil {
		b.taskIDs = map[string][]int64{}
	}
	b.taskIDs[projectID] = ids[1:]
	return ids[0], nil
}

// maxIDsTaken bounds the ids a batch takes at once; maxDeferred, the statements it
// keeps waiting (a write that creates thousands of tasks sends them by the 256).
const (
	maxIDsTaken = 64
	maxDeferred = 256
)

// restart rolls the batch back after one of its deferred statements was refused, and
// returns its writes to run again, first: j (the write running, if not among b.jobs
// yet), and those it put back or did not reach. The writes whose statement was refused
// (several, for tasks inserted together) run carefully.
func (b *batch) restart(j *job) []*job {
	_, _ = b.conn.ExecContext(context.Background(), "ROLLBACK") // a failure drops the connection (batch.fail)
	b.rolledBack()
	for _, r := range b.refused {
		r.careful = true
	}
	jobs := b.jobs
	if j != nil && (len(jobs) == 0 || jobs[len(jobs)-1] != j) {
		jobs = append(jobs, j)
	}
	return append(append(jobs, b.again...), b.queue...)
}

// deferrable says whether the write may defer a statement on the rows of a project:
// on PostgreSQL, in a batch that holds the project's lock, unless it runs carefully.
func (t *Tx) deferrable(projectID string) bool {
	return t.job != nil && !t.job.careful && projectID != "" && t.b.holdsLock(projectID)
}

// deferrableHere is deferrable for the project the write names (WritingIn), for
// statements that name their task only: the caller read it in that project.
func (t *Tx) deferrableHere() bool {
	return t.job != nil && t.deferrable(writingIn(t.job.ctx))
}

// deferStatement defers a statement written for both engines to the batch's next round
// trip.
func (t *Tx) deferStatement(ctx context.Context, query string, args ...any) {
	t.deferAs(ctx, query, postgresText(query), args)
}

// deferAs defers pgQuery, which does what query does. Past maxDeferred statements
// waiting, they are sent now; a refusal then is noted in b.refused, as anywhere else,
// and the write's next statement fails.
func (t *Tx) deferAs(ctx context.Context, query, pgQuery string, args []any) {
	t.statementContext(ctx, query) // notes the change, forgets what it may change (batchreads.go)
	t.b.deferred = append(t.b.deferred, deferredStatement{query: pgQuery, args: pgArgs(args), job: t.job})
	if len(t.b.deferred) >= maxDeferred {
		_ = t.b.flushDeferred(ctx)
	}
}

// deferTaskInsert defers the INSERT of a new task with the given id. Tasks inserted one
// after another, with no other statement deferred between them, go as one INSERT: on
// PostgreSQL a statement costs a task's INSERT about as much again as its row, and
// task_counts is kept once per statement (migration 00027).
func (t *Tx) deferTaskInsert(ctx context.Context, id int64, task *model.Task, steps string) {
	t.statementContext(ctx, "INSERT INTO tasks") // notes the change, as deferAs does
	b := t.b
	if n := len(b.deferred); n == 0 || b.deferred[n-1].tasks == nil {
		b.deferred = append(b.deferred, deferredStatement{job: t.job, tasks: &taskRows{}})
	}
	rows := b.deferred[len(b.deferred)-1].tasks
	rows.add(t.job, id, task, steps)
	if len(rows.jobs) >= maxDeferred || len(b.deferred) >= maxDeferred {
		_ = b.flushDeferred(ctx) // by the 256 rows, as other statements are sent
	}
}

// taskRows are the new tasks of one deferred INSERT, by column.
type taskRows struct {
	jobs                                              []*job // each row's write
	ids, waitingVersions                              []int64
	agentIDs, conversationIDs                         []*int64
	projectIDs, summaries, details, statuses, sources []string
	taskTypes, createdAt, updatedAt, steps            []string
	waitingDetails                                    []*string
}

func (r *taskRows) add(j *job, id int64, task *model.Task, steps string) {
	r.jobs = append(r.jobs, j)
	r.ids = append(r.ids, id)
	r.projectIDs = append(r.projectIDs, task.ProjectID)
	r.agentIDs = append(r.agentIDs, task.AgentID)
	r.conversationIDs = append(r.conversationIDs, task.ConversationID)
	r.summaries = append(r.summaries, task.Summary)
	r.details = append(r.details, task.Details)
	r.statuses = append(r.statuses, task.Status)
	r.sources = append(r.sources, task.Source)
	r.taskTypes = append(r.taskTypes, task.TaskType)
	r.waitingDetails = append(r.waitingDetails, task.WaitingDetails)
	r.waitingVersions = append(r.waitingVersions, task.WaitingVersion)
	r.createdAt = append(r.createdAt, fmtTime(task.CreatedAt))
	r.updatedAt = append(r.updatedAt, fmtTime(task.UpdatedAt))
	r.steps = append(r.steps, steps)
}

// args are insertTasksStatement's arguments: one array per column.
func (r *taskRows) args() []any {
	return []any{r.ids, r.projectIDs, r.agentIDs, r.conversationIDs, r.summaries, r.details, r.statuses,
		r.sources, r.taskTypes, r.waitingDetails, r.waitingVersions, r.createdAt, r.updatedAt, r.steps}
}

// insertTasksStatement inserts the rows of taskRows.args.
const insertTasksStatement = `INSERT INTO tasks (id, project_id, agent_id, conversation_id, summary, details, status, source, task_type, waiting_details, waiting_version, created_at, updated_at, steps, version)
SELECT id, project_id, agent_id, conversation_id, summary, details, status, source, task_type, waiting_details, waiting_version, created_at, updated_at, steps::jsonb, 1
FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::text[], $13::text[], $14::text[])
	AS r(id, project_id, agent_id, conversation_id, summary, details, status, source, task_type, waiting_details, waiting_version, created_at, updated_at, steps)`

// deferOneRowUpdate defers an UPDATE that must change exactly one row, as its caller
// would otherwise check. One that changes none fails where it is sent (a division by
// zero, as no SQL function raises an error), and then, as for any refused deferred
// statement, the write runs again carefully, where its statements run at once and its
// caller sees what they changed.
func (t *Tx) deferOneRowUpdate(ctx context.Context, update string, args ...any) {
	t.deferAs(ctx, update, `WITH changed AS (`+postgresText(update)+` RETURNING 1) SELECT 1 / (SELECT count(*) FROM changed)`, args)
}

// deferringConn is the connection of a PostgreSQL batch as its writes' statements see
// it: it sends the deferred statements before any other, and forgets them before a
// ROLLBACK (TO w), which would undo them. A failed send leaves the transaction
// unusable: the statement is still run, and fails.
type deferringConn struct {
	*sql.Conn
	b *batch
}

func (c deferringConn) before(ctx context.Context, query string) error {
	if strings.HasPrefix(query, "ROLLBACK") {
		c.b.rolledBack()
		return nil
	}
	return c.b.flushDeferred(ctx)
}

func (c deferringConn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	if err := c.before(ctx, query); err != nil {
		return nil, err
	}
	return c.Conn.ExecContext(ctx, query, args...)
}

func (c deferringConn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if err := c.before(ctx, query); err != nil {
		return nil, err
	}
	return c.Conn.QueryContext(ctx, query, args...)
}

func (c deferringConn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	_ = c.before(ctx, query) // a failure leaves the transaction failed: the query fails too
	return c.Conn.QueryRowContext(ctx, query, args...)
}

// task is Reader.Task inside a PostgreSQL batch: the statements waiting, the task's row
// and its conversation go in one round trip.
func (c deferringConn) task(ctx context.Context, r Reader, projectID string, id int64, withConversation bool) (*model.Task, error) {
	q := &pgx.Batch{}
	check := c.b.queueDeferred(q)
	var task *model.Task
	r.statementContext(ctx, taskQuery)
	queue(q, taskQuery, id, projectID).QueryRow(func(row pgx.Row) error {
		t, err := scanTask(row)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil // task stays nil
		}
		task = t
		return err
	})
	conversation := []model.TaskMessage{}
	if withConversation {
		r.statementContext(ctx, taskConversationQuery)
		queue(q, taskConversationQuery, id).Query(func(rows pgx.Rows) error {
			for rows.Next() {
				m, err := scanTaskMessage(rows)
				if err != nil {
					return err
				}
				conversation = append(conversation, m)
			}
			return rows.Err()
		})
	}
	err := c.b.sendTogether(ctx, q)
	check(err)
	if err != nil {
		return nil, err
	}
	if task == nil {
		return nil, ErrNotFound
	}
	if withConversation {
		task.Conversation = conversation
	}
	task.Derive()
	return task, nil
}
