package store

import (
	"context"
	"database/sql"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// dialect is what differs in the SQL of the two engines. Everything else is written
// once, with PostgreSQL's numbered parameters ($1, $2, ...), which SQLite binds by
// number too, and runs as written on both. Each engine's dialect is in its file
// (sqlite_sql.go, postgres_sql.go): nothing is rewritten at run time.
type dialect struct {
	// Statements whose text differs.
	taskByID, tasksByID, updateStepStatus, copyActivity string
	searchMessages, searchDocuments                     string
	vectorChunksByID, advanceWebhook                    string
	// What scanTask and scanVectorSpace read.
	taskColumns, vectorSpaceColumns string

	// bind adapts a statement's arguments to the driver.
	bind func(args []any) []any
	// insert runs an INSERT of one row and gives its id (Reader.insert).
	insert func(ctx context.Context, r Reader, query string, args []any) (sql.Result, error)
	// taskSearch is the condition that keeps the tasks matching a search of a project,
	// its argument added with param (TaskFilter.where).
	taskSearch func(param func(any) string, projectID, query string) string
	// taskPageOrder gives the condition and the orders (ascending, descending) of a page
	// of tasks whose condition is where (TaskFilter.page).
	taskPageOrder func(f TaskFilter, where string) (string, string, string)
	// taskCountsWhere is the condition of a count of tasks per status (TaskCounts).
	taskCountsWhere func(f TaskFilter, where string) string
	// indexTaskSearch brings the task search index up to date, about limit tasks at a
	// time, and says whether some remain; taskSearchBehind says whether tasks wait.
	indexTaskSearch  func(ctx context.Context, t *Tx, limit int) (bool, error)
	taskSearchBehind func(ctx context.Context, r Reader) (bool, error)
	// vectorKeywordSearch ranks a space's chunks against words (VectorKeywordSearch).
	vectorKeywordSearch func(ctx context.Context, r Reader, spaceID int64, words []string, limit int, documents []int64) ([]int64, error)
	// lockActivity makes the writes that fill the activity trail take turns.
	lockActivity func(ctx context.Context, t *Tx) error
	// claimDueJob is Tx.ClaimDueJob.
	claimDueJob func(ctx context.Context, t *Tx, projectID string, id int64, now time.Time) (*model.Job, error)
}

// taskSelect is the query of one task by id in a project, with the task columns cols.
func taskSelect(cols string) string {
	return `SELECT ` + cols + ` FROM tasks t LEFT JOIN agents a ON a.id = t.agent_id WHERE t.id = $1 AND t.project_id = $2`
}

// taskColumnsWith are what scanTask reads, over tasks t and agents a, with the required
// skills' names read by skills (a JSON array, sorted: a correlated subquery on
// task_skills' primary key, so a list of tasks stays one query).
func taskColumnsWith(skills string) string {
	return `t.id, t.project_id, t.agent_id, COALESCE(a.name, ''), t.conversation_id, t.summary, t.details, t.status, t.source, t.task_type,
	t.waiting_details, t.waiting_version, t.created_at, t.updated_at, t.steps, t.version, ` + skills + `,
	t.created_by, t.waiting_options, t.waiting_schema, t.waiting_expires_at, t.waiting_on_expiry, t.waiting_default, t.waiting_ask`
}

// vectorSpaceColumnsWith are what scanVectorSpace reads, the agents' ids as agents reads them.
func vectorSpaceColumnsWith(agents string) string {
	return `id, project_id, name, description, embedder, dimensions, document_count, chunk_count, created_at, version, ` + agents
}

// insertedRow is what Reader.insert returns: one row, with its id.
type insertedRow int64

func (r insertedRow) LastInsertId() (int64, error) { return int64(r), nil }
func (r insertedRow) RowsAffected() (int64, error) { return 1, nil }
