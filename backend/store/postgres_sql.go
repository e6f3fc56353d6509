package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
)

// PostgreSQL's dialect (dialect.go): the twins of sqlite_sql.go's statements and pieces.

// postgresTaskColumns are what scanTask reads on PostgreSQL.
var postgresTaskColumns = taskColumnsWith(`COALESCE((SELECT json_agg(s.name ORDER BY s.name) FROM task_skills ts JOIN skills s ON s.id = ts.skill_id WHERE ts.task_id = t.id), '[]')`)

var postgresSQL = &dialect{
	taskColumns: postgresTaskColumns,
	taskByID:    taskSelect(postgresTaskColumns),
	tasksByID: `SELECT ` + postgresTaskColumns + ` FROM tasks t LEFT JOIN agents a ON a.id = t.agent_id
		WHERE t.project_id = $1 AND t.id IN (SELECT value::bigint FROM jsonb_array_elements_text($2))`,
	updateStepStatus: `UPDATE tasks SET steps = jsonb_set(steps, ARRAY[$2::bigint::text, 'status'], to_jsonb($1::text))
		WHERE id = $3 AND $2::bigint BETWEEN 0 AND jsonb_array_length(steps) - 1`,
	copyActivity: `INSERT INTO activity (project_id, at, actor_kind, actor, via, action, object_type, object_id, event_seq)
		SELECT project_id, at, actor_kind, actor, via, type, split_part(type, '.', 1), object_id, seq
		FROM events WHERE project_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`,
	// ILIKE on the "C" collation ignores the case of ASCII letters, as SQLite's LIKE does.
	searchMessages: `SELECT m.id, m.conversation_id, COALESCE(c.name, ''), m.author, m.content, m.created_at
		FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.project_id = $1 AND m.content ILIKE $2 ESCAPE '\' ORDER BY m.id DESC LIMIT $3`,
	searchDocuments: `SELECT d.id, d.conversation_id, COALESCE(c.name, ''), d.uploaded_by, d.name, d.created_at
		FROM documents d JOIN conversations c ON c.id = d.conversation_id
		WHERE c.project_id = $1 AND d.name ILIKE $2 ESCAPE '\' ORDER BY d.id DESC LIMIT $3`,
	vectorSpaceColumns: vectorSpaceColumnsWith(`COALESCE((SELECT json_agg(agent_id ORDER BY agent_id) FROM vector_space_agents a WHERE a.space_id = vector_spaces.id), '[]')`),
	vectorChunksByID: `SELECT c.id, c.document_id, d.name, c.seq, c.text FROM vector_chunks c JOIN vector_documents d ON d.id = c.document_id
		WHERE c.space_id = $1 AND c.id IN (SELECT value::bigint FROM jsonb_array_elements_text($2))`,
	advanceWebhook: `UPDATE webhooks SET cursor = GREATEST(cursor, $1), attempts = 0, failing_since = NULL, next_attempt_at = NULL WHERE id = $2`,

	bind: pgArgs,
	// pgx has no LastInsertId: the statement returns the id.
	insert: func(ctx context.Context, r Reader, query string, args []any) (sql.Result, error) {
		var id int64
		ctx = r.statementContext(ctx, query) // not r.queryRow: an insert is not a counted query
		if err := r.q.QueryRowContext(ctx, query+" RETURNING id", pgArgs(args)...).Scan(&id); err != nil {
			return nil, err
		}
		return insertedRow(id), nil
	},
	// The GIN index tasks_search (migration 00030), which holds each word behind its
	// project's tag (searchTag); no pending queue on PostgreSQL.
	taskSearch: func(param func(any) string, projectID, query string) string {
		return "to_tsvector('agentdesk_simple', task_search_words(t.project_id, t.summary, t.details)) @@ to_tsquery('agentdesk_simple', " + param(taskTSQuery(projectID, query)) + ")"
	},
	taskPageOrder: func(f TaskFilter, where string) (string, string, string) {
		if f.AgentID != nil || f.ConversationID != nil || f.Query != "" {
			return where, `t.id`, `t.id DESC`
		}
		// A list of the project (or of one status): only the project's indexes
		// (tasks_project, tasks_project_status) give its order. With project_id = $1,
		// PostgreSQL drops project_id from the order (a constant) and, taking the project's
		// tasks to be spread evenly over the ids, may walk the primary key instead and
		// filter out every other project's task before the first of this one (a page of
		// 10k tasks behind 5k of another project: 5-12 ms; TestPostgresListPlan).
		// = ANY(ARRAY[$1]) is the same condition, which PostgreSQL does not take for a
		// constant: the order project_id, id can then only come from the index.
		where = `t.project_id = ANY(ARRAY[$1])` + strings.TrimPrefix(where, `t.project_id = $1`)
		return where, `t.project_id, t.id`, `t.project_id DESC, t.id DESC`
	},
	taskCountsWhere:     func(_ TaskFilter, where string) string { return where },
	indexTaskSearch:     func(context.Context, *Tx, int) (bool, error) { return false, nil }, // every write keeps the GIN index
	taskSearchBehind:    func(context.Context, Reader) (bool, error) { return false, nil },
	vectorKeywordSearch: vectorKeywordSearchPostgres,
	// Two servers filling the trail at once would both copy the same events: they take
	// turns, and each reads how far the trail is filled once it has its turn. (Locking
	// the projects' rows instead held every write's commit, which advances their event
	// seq, for the whole copy.)
	lockActivity: func(ctx context.Context, t *Tx) error {
		_, err := t.exec(ctx, `SELECT pg_advisory_xact_lock($1)`, postgres.ActivityLockKey)
		return err
	},
	claimDueJob: postgresClaimDueJob,
}

// postgresClaimDueJob claims the job (claimJob, pgjobs.go): ErrJobHeld when another
// server's write holds it.
func postgresClaimDueJob(ctx context.Context, t *Tx, projectID string, id int64, now time.Time) (*model.Job, error) {
	j, err := claimJob(ctx, t.q, projectID, id, now)
	if errors.Is(err, ErrNotFound) {
		// Gone, not due, or held: only a held job is still due, and is looked at again.
		var due bool
		if err := t.q.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM jobs j`+dueJobsWhere+
			` AND j.project_id = $3 AND j.id = $4)`, fmtTime(now), neverRun, projectID, id).Scan(&due); err != nil {
			return nil, err
		}
		if due {
			return nil, ErrJobHeld
		}
	}
	return j, err
}

// pgArgs adapts arguments to PostgreSQL: SQLite stores a Go bool as the integer 0 or 1,
// and the columns that hold them are bigint on PostgreSQL, which pgx will not encode a
// bool into. The slice is copied only when it holds a bool.
func pgArgs(args []any) []any {
	for i, a := range args {
		if _, ok := a.(bool); ok {
			out := slices.Clone(args)
			for j := i; j < len(out); j++ {
				if b, ok := out[j].(bool); ok {
					out[j] = boolInt(b)
				}
			}
			return out
		}
	}
	return args
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}
