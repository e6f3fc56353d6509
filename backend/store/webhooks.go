package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

const webhookColumns = `id, project_id, url, events, secret, description, enabled, created_at, updated_at,
	cursor, attempts, failing_since, next_attempt_at, disabled_reason`

func scanWebhook(row rowScanner) (*model.Webhook, error) {
	var w model.Webhook
	var events, created, updated string
	var failing, next sql.NullString
	err := row.Scan(&w.ID, &w.ProjectID, &w.URL, &events, &w.Secret, &w.Description, &w.Enabled, &created, &updated,
		&w.Cursor, &w.Attempts, &failing, &next, &w.DisabledReason)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &w.Events); err != nil {
		return nil, err
	}
	if w.Events == nil {
		w.Events = []string{}
	}
	w.CreatedAt, w.UpdatedAt = parseTime(created), parseTime(updated)
	w.FailingSince, w.NextAttemptAt = parseTimePtr(failing), parseTimePtr(next)
	return &w, nil
}

// LastEventSeq is the project's last event seq, counting the events of this write and
// of its batch that are not stored yet.
func (t *Tx) LastEventSeq(ctx context.Context, projectID string) (int64, error) {
	last, err := t.projectSeq(ctx, projectID)
	if errors.Is(err, ErrNotFound) {
		return 0, ErrNotFound
	}
	return last, err
}

// InsertWebhook stores a new webhook and sets its id.
func (t *Tx) InsertWebhook(ctx context.Context, w *model.Webhook) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return err
	}
	res, err := t.insert(ctx,
		`INSERT INTO webhooks (project_id, url, events, secret, description, enabled, created_at, updated_at, cursor)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		w.ProjectID, w.URL, string(events), w.Secret, w.Description, w.Enabled, fmtTime(w.CreatedAt), fmtTime(w.UpdatedAt), w.Cursor)
	if err != nil {
		return err
	}
	w.ID, err = res.LastInsertId()
	return err
}

// UpdateWebhook writes what its owner may change (events, description, enabled) and
// the failure state (attempts, failing_since, next_attempt_at, disabled_reason); the
// cursor only ever moves forward, by AdvanceWebhook.
func (t *Tx) UpdateWebhook(ctx context.Context, w *model.Webhook) error {
	events, err := json.Marshal(w.Events)
	if err != nil {
		return err
	}
	return t.execOne(ctx,
		`UPDATE webhooks SET events = $1, description = $2, enabled = $3, updated_at = $4, attempts = $5, failing_since = $6,
		 next_attempt_at = $7, disabled_reason = $8 WHERE id = $9 AND project_id = $10`,
		string(events), w.Description, w.Enabled, fmtTime(w.UpdatedAt), w.Attempts, fmtTimePtr(w.FailingSince),
		fmtTimePtr(w.NextAttemptAt), w.DisabledReason, w.ID, w.ProjectID)
}

// AdvanceWebhook moves the webhook's cursor to seq (never back) and clears its failures:
// the events up to seq are done with.
func (t *Tx) AdvanceWebhook(ctx context.Context, id, seq int64) error {
	return t.execOne(ctx, t.sql.advanceWebhook, seq, id)
}

// DeleteWebhook removes a webhook of the project with its deliveries.
func (t *Tx) DeleteWebhook(ctx context.Context, projectID string, id int64) error {
	return t.execOne(ctx, `DELETE FROM webhooks WHERE id = $1 AND project_id = $2`, id, projectID)
}

// Webhook loads a webhook of the project.
func (r Reader) Webhook(ctx context.Context, projectID string, id int64) (*model.Webhook, error) {
	return scanWebhook(r.queryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE project_id = $1 AND id = $2`, projectID, id))
}

// WebhookByID loads a webhook of any project (the deliverer's).
func (r Reader) WebhookByID(ctx context.Context, id int64) (*model.Webhook, error) {
	return scanWebhook(r.queryRow(ctx, `SELECT `+webhookColumns+` FROM webhooks WHERE id = $1`, id))
}

// Webhooks lists the project's webhooks by id.
func (r Reader) Webhooks(ctx context.Context, projectID string) ([]model.Webhook, error) {
	return queryList(ctx, r, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks WHERE project_id = $1 ORDER BY id`, projectID)
}

// DueWebhooks lists the enabled webhooks of every project that have events after their
// cursor and no retry set for later than now.
func (r Reader) DueWebhooks(ctx context.Context, now time.Time) ([]model.Webhook, error) {
	return queryList(ctx, r, scanWebhook, `SELECT `+webhookColumns+` FROM webhooks w
		WHERE w.enabled = 1 AND w.cursor < (SELECT p.event_seq FROM projects p WHERE p.id = w.project_id)
		AND (w.next_attempt_at IS NULL OR w.next_attempt_at <= $1) ORDER BY w.id`, fmtTime(now))
}

// EnabledWebhooks counts the enabled webhooks of every project.
func (r Reader) EnabledWebhooks(ctx context.Context) (int64, error) {
	var n int64
	err := r.queryRow(ctx, `SELECT COUNT(*) FROM webhooks WHERE enabled = 1`).Scan(&n)
	return n, err
}

// NextWebhookAttempt is the earliest retry of an enabled webhook set after now; ok is
// false when none is.
func (r Reader) NextWebhookAttempt(ctx context.Context, now time.Time) (at time.Time, ok bool, err error) {
	var s sql.NullString
	if err := r.queryRow(ctx, `SELECT MIN(next_attempt_at) FROM webhooks WHERE enabled = 1 AND next_attempt_at > $1`, fmtTime(now)).Scan(&s); err != nil {
		return time.Time{}, false, err
	}
	if !s.Valid {
		return time.Time{}, false, nil
	}
	return parseTime(s.String), true, nil
}

// InsertWebhookDelivery records an attempt and sets its id.
func (t *Tx) InsertWebhookDelivery(ctx context.Context, d *model.WebhookDelivery) error {
	res, err := t.insert(ctx,
		`INSERT INTO webhook_deliveries (webhook_id, seq, event_type, attempt, status, duration_ms, response, error, at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		d.WebhookID, d.Seq, d.EventType, d.Attempt, d.Status, d.DurationMS, d.Response, d.Error, fmtTime(d.At))
	if err != nil {
		return err
	}
	d.ID, err = res.LastInsertId()
	return err
}

const deliveryColumns = `d.id, d.webhook_id, d.seq, d.event_type, d.attempt, d.status, d.duration_ms, d.response, d.error, d.at`

func scanDelivery(row rowScanner) (*model.WebhookDelivery, error) {
	var d model.WebhookDelivery
	var status sql.NullInt64
	var at string
	err := row.Scan(&d.ID, &d.WebhookID, &d.Seq, &d.EventType, &d.Attempt, &status, &d.DurationMS, &d.Response, &d.Error, &at)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	if status.Valid {
		s := int(status.Int64)
		d.Status = &s
	}
	d.At = parseTime(at)
	return &d, nil
}

// WebhookDeliveries lists a webhook's attempts, newest first, before the id before (0:
// from the newest).
func (r Reader) WebhookDeliveries(ctx context.Context, webhookID, before int64, limit int) ([]model.WebhookDelivery, error) {
	q := `SELECT ` + deliveryColumns + ` FROM webhook_deliveries d WHERE d.webhook_id = $1`
	args := []any{webhookID}
	if before > 0 {
		q += ` AND d.id < $2`
		args = append(args, before)
	}
	return queryList(ctx, r, scanDelivery, q+` ORDER BY d.id DESC`+limitClause(limit), args...)
}

// WebhookDelivery loads an attempt of a webhook of the project.
func (r Reader) WebhookDelivery(ctx context.Context, projectID string, id int64) (*model.WebhookDelivery, error) {
	return scanDelivery(r.queryRow(ctx, `SELECT `+deliveryColumns+` FROM webhook_deliveries d
		JOIN webhooks w ON w.id = d.webhook_id WHERE w.project_id = $1 AND d.id = $2`, projectID, id))
}

// PruneWebhookDeliveries forgets the attempts made before a time.
func (t *Tx) PruneWebhookDeliveries(ctx context.Context, before time.Time) (int64, error) {
	res, err := t.exec(ctx, `DELETE FROM webhook_deliveries WHERE at < $1`, fmtTime(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
