package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// A Waiting task's question beyond its text (migration 00034): its options and schema
// as JSON, its deadline, what happens then, and the person asked; and the user who
// created the task, the person asked when the question names nobody.

// questionArgs are the values of the question's columns, in the order waiting_options,
// waiting_schema, waiting_expires_at, waiting_on_expiry, waiting_default, waiting_ask.
func questionArgs(t *model.Task) []any {
	var options any
	if t.WaitingOptions != nil {
		b, _ := json.Marshal(t.WaitingOptions) // strings: cannot fail
		options = string(b)
	}
	return []any{options, rawJSON(t.WaitingSchema), fmtTimePtr(t.WaitingExpiresAt), t.WaitingOnExpiry, rawJSON(t.WaitingDefault), t.WaitingAsk}
}

// rawJSON is a JSON column's value: NULL for none.
func rawJSON(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

// storedQuestion is what scanTask reads of the question's columns and created_by.
type storedQuestion struct {
	createdBy                                      sql.NullInt64
	options, schema, expiresAt, onExpiry, def, ask sql.NullString
}

// set puts the question read into t.
func (q *storedQuestion) set(t *model.Task) error {
	if q.createdBy.Valid {
		t.CreatedBy = &q.createdBy.Int64
	}
	if q.options.Valid {
		if err := json.Unmarshal([]byte(q.options.String), &t.WaitingOptions); err != nil {
			return fmt.Errorf("the waiting_options of task %d: %w", t.ID, err)
		}
	}
	if q.schema.Valid {
		t.WaitingSchema = json.RawMessage(q.schema.String)
	}
	if q.def.Valid {
		t.WaitingDefault = json.RawMessage(q.def.String)
	}
	if q.onExpiry.Valid {
		t.WaitingOnExpiry = &q.onExpiry.String
	}
	if q.ask.Valid {
		t.WaitingAsk = &q.ask.String
	}
	t.WaitingExpiresAt = parseTimePtr(q.expiresAt)
	return nil
}

// DueQuestion is a task whose question's deadline has come.
type DueQuestion struct {
	ProjectID string
	TaskID    int64
}

// DueQuestions lists the tasks whose question's deadline is at or before now, the
// earliest first, at most limit of them. Only a Waiting task has a deadline (the
// service clears it with the question), so these are all Waiting.
func (r Reader) DueQuestions(ctx context.Context, now time.Time, limit int) ([]DueQuestion, error) {
	return queryList(ctx, r, func(row rowScanner) (*DueQuestion, error) {
		var d DueQuestion
		return &d, row.Scan(&d.ProjectID, &d.TaskID)
	}, `SELECT project_id, id FROM tasks WHERE waiting_expires_at IS NOT NULL AND waiting_expires_at <= $1
		ORDER BY waiting_expires_at, id LIMIT $2`, fmtTime(now), limit)
}
