package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"modernc.org/sqlite"

	"github.com/agentdesk/agentdesk/backend/model"
)

// SQLite's dialect (dialect.go): the statements and pieces whose PostgreSQL text is in
// postgres_sql.go.

// sqliteTaskColumns are what scanTask reads on SQLite.
var sqliteTaskColumns = taskColumnsWith(`(SELECT json_group_array(name) FROM (SELECT s.name FROM task_skills ts JOIN skills s ON s.id = ts.skill_id WHERE ts.task_id = t.id ORDER BY s.name))`)

var sqliteSQL = &dialect{
	taskColumns: sqliteTaskColumns,
	taskByID:    taskSelect(sqliteTaskColumns),
	tasksByID: `SELECT ` + sqliteTaskColumns + ` FROM tasks t LEFT JOIN agents a ON a.id = t.agent_id
		WHERE t.project_id = $1 AND t.id IN (SELECT value FROM json_each($2))`,
	updateStepStatus: `UPDATE tasks SET steps = json_set(steps, '$[' || $2 || '].status', $1)
		WHERE id = $3 AND $2 BETWEEN 0 AND json_array_length(steps) - 1`,
	copyActivity: `INSERT INTO activity (project_id, at, actor_kind, actor, via, action, object_type, object_id, event_seq)
		SELECT project_id, at, actor_kind, actor, via, type, IIF(instr(type, '.') > 0, substr(type, 1, instr(type, '.') - 1), type), object_id, seq
		FROM events WHERE project_id = $1 AND seq > $2 AND seq <= $3 ORDER BY seq`,
	searchMessages: `SELECT m.id, m.conversation_id, COALESCE(c.name, ''), m.author, m.content, m.created_at
		FROM messages m JOIN conversations c ON c.id = m.conversation_id
		WHERE c.project_id = $1 AND m.content LIKE $2 ESCAPE '\' ORDER BY m.id DESC LIMIT $3`,
	searchDocuments: `SELECT d.id, d.conversation_id, COALESCE(c.name, ''), d.uploaded_by, d.name, d.created_at
		FROM documents d JOIN conversations c ON c.id = d.conversation_id
		WHERE c.project_id = $1 AND d.name LIKE $2 ESCAPE '\' ORDER BY d.id DESC LIMIT $3`,
	vectorSpaceColumns: vectorSpaceColumnsWith(`COALESCE((SELECT json_group_array(agent_id) FROM (SELECT agent_id FROM vector_space_agents a WHERE a.space_id = vector_spaces.id ORDER BY agent_id)), '[]')`),
	vectorChunksByID: `SELECT c.id, c.document_id, d.name, c.seq, c.text FROM vector_chunks c JOIN vector_documents d ON d.id = c.document_id
		WHERE c.space_id = $1 AND c.id IN (SELECT value FROM json_each($2))`,
	advanceWebhook: `UPDATE webhooks SET cursor = MAX(cursor, $1), attempts = 0, failing_since = NULL, next_attempt_at = NULL WHERE id = $2`,

	bind: func(args []any) []any { return args },
	insert: func(ctx context.Context, r Reader, query string, args []any) (sql.Result, error) {
		return r.exec(ctx, query, args...)
	},
	// The matches come from the FTS5 index tasks_fts, which holds each word behind its
	// project's tag (searchTag): the search reads only its own project's terms.
	taskSearch: func(param func(any) string, projectID, query string) string {
		return "t.id IN (SELECT rowid FROM tasks_fts WHERE tasks_fts MATCH " + param(taskMatch(projectID, query)) + ")"
	},
	taskPageOrder: func(_ TaskFilter, where string) (string, string, string) {
		return where, `t.id`, `t.id DESC`
	},
	// With a search, the count starts from the index's matches, each task read by id:
	// the unary + keeps SQLite off the project's index, which it would otherwise walk
	// whole (at 1,000,000 tasks, 340-570 ms against 5-9 ms). where begins with the
	// project's condition.
	taskCountsWhere: func(f TaskFilter, where string) string {
		if f.Query != "" {
			return "+" + where
		}
		return where
	},
	indexTaskSearch: sqliteIndexTaskSearch,
	taskSearchBehind: func(ctx context.Context, r Reader) (bool, error) {
		var behind bool
		err := r.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM tasks_fts_pending)`).Scan(&behind)
		return behind, err
	},
	vectorKeywordSearch: sqliteVectorKeywordSearch,
	lockActivity:        func(context.Context, *Tx) error { return nil }, // one writer
	claimDueJob:         sqliteClaimDueJob,
}

// sqliteIndexTaskSearch brings the search index (tasks_fts) up to date with the tasks
// noted in tasks_fts_pending by the triggers of migration 00021, about limit of them at
// most, and says whether some remain: each noted task's entry goes, and comes back with
// its current words (taskSearchWords) unless the task is gone. One FTS5 segment for the
// whole pass.
func sqliteIndexTaskSearch(ctx context.Context, t *Tx, limit int) (more bool, err error) {
	ids, err := t.ids(ctx, `SELECT task_id FROM tasks_fts_pending ORDER BY task_id LIMIT $1`, limit+1)
	if err != nil || len(ids) == 0 {
		return false, err
	}
	if len(ids) > limit {
		ids, more = ids[:limit], true
	}
	list, _ := json.Marshal(ids)
	for _, q := range []string{
		`DELETE FROM tasks_fts WHERE rowid IN (SELECT value FROM json_each($1))`,
		`INSERT INTO tasks_fts (rowid, words) SELECT id, task_search_words(project_id, summary, details) FROM tasks WHERE id IN (SELECT value FROM json_each($1))`,
		`DELETE FROM tasks_fts_pending WHERE task_id IN (SELECT value FROM json_each($1))`,
	} {
		if _, err := t.exec(ctx, q, string(list)); err != nil {
			return false, err
		}
	}
	return more, nil
}

// sqliteVectorKeywordSearch ranks by FTS5's BM25 over vector_chunks_fts (Porter stemming).
func sqliteVectorKeywordSearch(ctx context.Context, r Reader, spaceID int64, words []string, limit int, documents []int64) ([]int64, error) {
	var terms []string
	for _, w := range words {
		if q := `"` + strings.ReplaceAll(w, `"`, `""`) + `"`; !slices.Contains(terms, q) && len(terms) < maxKeywordTerms {
			terms = append(terms, q)
		}
	}
	match := `space : "s` + strconv.FormatInt(spaceID, 10) + `" AND text : (` + strings.Join(terms, " OR ") + `)`
	q := `SELECT rowid FROM vector_chunks_fts WHERE vector_chunks_fts MATCH $1 ORDER BY bm25(vector_chunks_fts, 1.0, 0.0) LIMIT $2`
	args := []any{match, limit}
	if len(documents) > 0 {
		list, _ := json.Marshal(documents)
		q = `SELECT f.rowid FROM vector_chunks_fts f JOIN vector_chunks c ON c.id = f.rowid
			WHERE vector_chunks_fts MATCH $1 AND c.document_id IN (SELECT value FROM json_each($2))
			ORDER BY bm25(vector_chunks_fts, 1.0, 0.0) LIMIT $3`
		args = []any{match, string(list), limit}
	}
	return r.ids(ctx, q, args...)
}

// sqliteClaimDueJob re-reads the due job inside the write that runs it: one writer runs
// every write, so no other can be running it.
func sqliteClaimDueJob(ctx context.Context, t *Tx, projectID string, id int64, now time.Time) (*model.Job, error) {
	j, err := t.Job(ctx, projectID, id)
	if err != nil {
		return nil, err
	}
	if j.NextRunAt == nil || j.NextRunAt.After(now) {
		return nil, ErrNotFound // paused or rescheduled meanwhile
	}
	return j, nil
}

// task_search_words(project_id, summary, details) is taskSearchWords as a SQLite
// function (PostgreSQL has its own, migration 00030): the index is filled row by row
// inside SQLite, so a pass never holds its tasks' text in Go.
func init() {
	sqlite.MustRegisterDeterministicScalarFunction("task_search_words", 3, func(_ *sqlite.FunctionContext, args []driver.Value) (driver.Value, error) {
		text := func(v driver.Value) string {
			switch v := v.(type) {
			case string:
				return v
			case []byte:
				return string(v)
			}
			return ""
		}
		return taskSearchWords(text(args[0]), text(args[1])+" "+text(args[2])), nil
	})
}

// taskSearchWords is what tasks_fts holds for a task's text: each of its words (runs of
// letters and digits, as searchWords splits a query) behind the project's tag. Case and
// accents are left to the index's tokenizer, which folds both, and a word twice is
// harmless (the index keeps no positions): the index takes in every task through this,
// so it allocates little more than its result.
func taskSearchWords(projectID, text string) string {
	tag := searchTag(projectID)
	var sb strings.Builder
	inWord := false
	for _, c := range text {
		letter := unicode.IsLetter(c) || unicode.IsDigit(c)
		switch {
		case letter && !inWord:
			sb.WriteString(tag)
		case !letter && inWord:
			sb.WriteByte(' ')
		}
		if letter {
			sb.WriteRune(c)
		}
		inWord = letter
	}
	return sb.String()
}
