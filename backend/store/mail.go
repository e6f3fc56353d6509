package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Email to the people a question asks (migration 00035): each project's cursor on its
// event log, the outbox of sends, and the links of sent emails (by their token's hash).

// Statuses of a send.
const (
	MailQueued  = "queued"  // to send at NextAttemptAt (first try or retry)
	MailSent    = "sent"    // the SMTP server took it
	MailFailed  = "failed"  // given up after failing too long
	MailDropped = "dropped" // its question ended before it went out
)

// MailSend is one email to one person about one question (a task at a waiting_version).
type MailSend struct {
	ID             int64
	ProjectID      string
	TaskID         int64
	WaitingVersion int64
	Recipient      string
	Status         string
	Attempts       int
	LastError      string
	NextAttemptAt  time.Time
	CreatedAt      time.Time
	SentAt         *time.Time
}

const mailSendColumns = `id, project_id, task_id, waiting_version, recipient, status, attempts, last_error, next_attempt_at, created_at, sent_at`

func scanMailSend(row rowScanner) (*MailSend, error) {
	var m MailSend
	var next, created string
	var sent sql.NullString
	err := row.Scan(&m.ID, &m.ProjectID, &m.TaskID, &m.WaitingVersion, &m.Recipient, &m.Status, &m.Attempts, &m.LastError,
		&next, &created, &sent)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	m.NextAttemptAt, m.CreatedAt, m.SentAt = parseTime(next), parseTime(created), parseTimePtr(sent)
	return &m, nil
}

// MailCursor is how far a project's event log has been read for new questions.
type MailCursor struct {
	ProjectID string
	Cursor    int64
}

// MailCursorsBehind lists the projects with events after their mail cursor (a project
// never looked at has cursor 0).
func (r Reader) MailCursorsBehind(ctx context.Context) ([]MailCursor, error) {
	return queryList(ctx, r, func(row rowScanner) (*MailCursor, error) {
		var c MailCursor
		return &c, row.Scan(&c.ProjectID, &c.Cursor)
	}, `SELECT p.id, COALESCE(c.cursor, 0) FROM projects p LEFT JOIN mail_cursors c ON c.project_id = p.id
		WHERE COALESCE(c.cursor, 0) < p.event_seq ORDER BY p.id`)
}

// AdvanceMailCursor moves the project's mail cursor to seq; never back.
func (t *Tx) AdvanceMailCursor(ctx context.Context, projectID string, seq int64) error {
	_, err := t.exec(ctx, `INSERT INTO mail_cursors (project_id, cursor) VALUES ($1, $2)
		ON CONFLICT (project_id) DO UPDATE SET cursor = excluded.cursor WHERE mail_cursors.cursor < excluded.cursor`, projectID, seq)
	return err
}

// QueueMail adds a send to the outbox, unless that person has one for that question.
func (t *Tx) QueueMail(ctx context.Context, m *MailSend) error {
	_, err := t.exec(ctx, `INSERT INTO mail_outbox (project_id, task_id, waiting_version, recipient, status, next_attempt_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (task_id, waiting_version, recipient) DO NOTHING`,
		m.ProjectID, m.TaskID, m.WaitingVersion, m.Recipient, MailQueued, fmtTime(m.NextAttemptAt), fmtTime(m.CreatedAt))
	return err
}

// DueMail lists the queued sends of every project whose next attempt is not after now,
// oldest due first, at most limit.
func (r Reader) DueMail(ctx context.Context, now time.Time, limit int) ([]MailSend, error) {
	return queryList(ctx, r, scanMailSend, `SELECT `+mailSendColumns+` FROM mail_outbox
		WHERE status = $1 AND next_attempt_at <= $2 ORDER BY next_attempt_at, id LIMIT $3`, MailQueued, fmtTime(now), limit)
}

// MailSendByID loads a send of any project.
func (r Reader) MailSendByID(ctx context.Context, id int64) (*MailSend, error) {
	return scanMailSend(r.queryRow(ctx, `SELECT `+mailSendColumns+` FROM mail_outbox WHERE id = $1`, id))
}

// MailSends lists a project's sends, newest first, at most limit.
func (r Reader) MailSends(ctx context.Context, projectID string, limit int) ([]MailSend, error) {
	return queryList(ctx, r, scanMailSend, `SELECT `+mailSendColumns+` FROM mail_outbox WHERE project_id = $1 ORDER BY id DESC LIMIT $2`,
		projectID, limit)
}

// ClaimMail takes a queued send that is due by now for one attempt, moving its next
// attempt to until, so that no other server sharing the database sends it meanwhile;
// ErrNotFound when it is not queued and due (another server took it).
func (t *Tx) ClaimMail(ctx context.Context, id int64, now, until time.Time) error {
	return t.execOne(ctx, `UPDATE mail_outbox SET next_attempt_at = $1 WHERE id = $2 AND status = $3 AND next_attempt_at <= $4`,
		fmtTime(until), id, MailQueued, fmtTime(now))
}

// UpdateMail writes a send's state.
func (t *Tx) UpdateMail(ctx context.Context, m *MailSend) error {
	return t.execOne(ctx, `UPDATE mail_outbox SET status = $1, attempts = $2, last_error = $3, next_attempt_at = $4, sent_at = $5 WHERE id = $6`,
		m.Status, m.Attempts, m.LastError, fmtTime(m.NextAttemptAt), fmtTimePtr(m.SentAt), m.ID)
}

// PruneMail forgets the sends created before before that are no longer queued, with
// their links.
func (t *Tx) PruneMail(ctx context.Context, before time.Time) (int64, error) {
	res, err := t.exec(ctx, `DELETE FROM mail_outbox WHERE status <> $1 AND created_at < $2`, MailQueued, fmtTime(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}

// MailLink is a link of a sent email: the hash of its token, its send, and what it
// answers (an option's index; -1 opens the question).
type MailLink struct {
	TokenHash string
	OutboxID  int64
	Choice    int
	UsedAt    *time.Time
}

// PutMailLinks replaces the links of a send (an attempt makes new ones: a failed
// attempt's tokens were never seen).
func (t *Tx) PutMailLinks(ctx context.Context, outboxID int64, links []MailLink) error {
	if _, err := t.exec(ctx, `DELETE FROM mail_links WHERE outbox_id = $1`, outboxID); err != nil {
		return err
	}
	for _, l := range links {
		if _, err := t.exec(ctx, `INSERT INTO mail_links (token_hash, outbox_id, choice) VALUES ($1, $2, $3)`,
			l.TokenHash, outboxID, l.Choice); err != nil {
			return err
		}
	}
	return nil
}

// MailLinkByHash loads a link by its token's hash.
func (r Reader) MailLinkByHash(ctx context.Context, hash string) (*MailLink, error) {
	var l MailLink
	var used sql.NullString
	err := r.queryRow(ctx, `SELECT token_hash, outbox_id, choice, used_at FROM mail_links WHERE token_hash = $1`, hash).
		Scan(&l.TokenHash, &l.OutboxID, &l.Choice, &used)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	l.UsedAt = parseTimePtr(used)
	return &l, nil
}

// UseMailLink marks a link used; ErrNotFound when it is gone or was used already.
func (t *Tx) UseMailLink(ctx context.Context, hash string, at time.Time) error {
	return t.execOne(ctx, `UPDATE mail_links SET used_at = $1 WHERE token_hash = $2 AND used_at IS NULL`, fmtTime(at), hash)
}
