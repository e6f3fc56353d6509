package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/model"
)

// activityRow is the audit entry of an event: who (from the context: the principal and
// the interface), what (the event type), which object (the type's prefix and the data's
// id), when. AppendEvent makes one per event; the batch stores them (flushActivity).
type activityRow struct {
	projectID, at, actorKind, actor, via, action, objectType, objectID string
	seq                                                                int64
}

func newActivity(ctx context.Context, e model.Event, data []byte) activityRow {
	a := audit.From(ctx)
	objType, _, _ := strings.Cut(e.Type, ".")
	return activityRow{projectID: e.ProjectID, at: fmtTime(e.At), actorKind: a.Kind, actor: a.Name, via: a.Via,
		action: e.Type, objectType: objType, objectID: objectID(data), seq: e.Seq}
}

// flushActivity writes the batch's activity entries, in the events' order.
func (b *batch) flushActivity(ctx context.Context, r Reader) error {
	for start := 0; start < len(b.activity); start += maxRowsPerInsert {
		rows := b.activity[start:min(start+maxRowsPerInsert, len(b.activity))]
		args := make([]any, 0, 9*len(rows))
		for _, a := range rows {
			args = append(args, a.projectID, a.at, a.actorKind, a.actor, a.via, a.action, a.objectType, a.objectID, a.seq)
		}
		if _, err := r.exec(ctx, insertRows(`INSERT INTO activity (project_id, at, actor_kind, actor, via, action, object_type, object_id, event_seq) VALUES `, 9, len(rows)), args...); err != nil {
			return fmt.Errorf("store activity: %w", err)
		}
	}
	return nil
}

// objectID finds the id of the object an event is about in its data: id, else the
// first of the usual reference fields. It decodes those fields alone: the rest of the
// data (a task's steps and conversation) is skipped, not copied.
func objectID(data []byte) string {
	// Most event data is an object whose first field is a numeric id (a task, a
	// message): read it without decoding the rest.
	if rest, ok := bytes.CutPrefix(data, []byte(`{"id":`)); ok {
		end := 0
		for end < len(rest) && rest[end] >= '0' && rest[end] <= '9' {
			end++
		}
		if end > 0 && end < len(rest) && (rest[end] == ',' || rest[end] == '}') {
			return string(rest[:end])
		}
	}
	var refs struct {
		ID             json.RawMessage `json:"id"`
		JobID          json.RawMessage `json:"jobId"`
		SkillID        json.RawMessage `json:"skillId"`
		MessageID      json.RawMessage `json:"messageId"`
		UserID         json.RawMessage `json:"userId"`
		ConversationID json.RawMessage `json:"conversationId"`
		ProjectID      json.RawMessage `json:"projectId"`
	}
	if json.Unmarshal(data, &refs) != nil {
		return ""
	}
	for _, raw := range []json.RawMessage{refs.ID, refs.JobID, refs.SkillID, refs.MessageID, refs.UserID, refs.ConversationID, refs.ProjectID} {
		if raw == nil {
			continue
		}
		var n int64
		if json.Unmarshal(raw, &n) == nil {
			return strconv.FormatInt(n, 10)
		}
		var s string
		if json.Unmarshal(raw, &s) == nil {
			return s
		}
	}
	return ""
}

// ActivityFilter selects entries of a project's activity. Zero fields select everything.
type ActivityFilter struct {
	ProjectID  string
	ObjectType string
	ObjectID   string
	Actor      string
	Via        string
	Since      *time.Time
	Until      *time.Time
	Before     int64 // only entries with an id below this one
	Limit      int
}

// Activity lists entries newest first.
func (r Reader) Activity(ctx context.Context, f ActivityFilter) ([]model.Activity, error) {
	q := `SELECT id, at, actor_kind, actor, via, action, object_type, object_id, event_seq FROM activity WHERE project_id = ?`
	args := []any{f.ProjectID}
	cond := func(on bool, sql string, v any) {
		if on {
			q += " AND " + sql
			args = append(args, v)
		}
	}
	cond(f.ObjectType != "", "object_type = ?", f.ObjectType)
	cond(f.ObjectID != "", "object_id = ?", f.ObjectID)
	cond(f.Actor != "", "actor = ?", f.Actor)
	cond(f.Via != "", "via = ?", f.Via)
	if f.Since != nil {
		cond(true, "at >= ?", fmtTime(*f.Since))
	}
	if f.Until != nil {
		cond(true, "at < ?", fmtTime(*f.Until))
	}
	cond(f.Before > 0, "id < ?", f.Before)
	q += " ORDER BY id DESC"
	if f.Limit > 0 {
		q += limitClause(f.Limit)
	}
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []model.Activity{}
	for rows.Next() {
		var a model.Activity
		var at string
		if err := rows.Scan(&a.ID, &at, &a.ActorKind, &a.Actor, &a.Via, &a.Action, &a.ObjectType, &a.ObjectID, &a.EventSeq); err != nil {
			return nil, err
		}
		a.At = parseTime(at)
		out = append(out, a)
	}
	return out, rows.Err()
}

// PruneActivity forgets activity older than before among the oldest limit entries (so
// that one pass never holds the writer long), and says how many went. Entries are
// appended in time order, so the oldest rows are the expired ones: no index on the time
// is needed (one fewer to update on every write), and a pass costs limit rows at most
// even when nothing has expired. Fewer than limit gone means the expired ones are done.
func (t *Tx) PruneActivity(ctx context.Context, before time.Time, limit int) (int64, error) {
	res, err := t.exec(ctx, `DELETE FROM activity WHERE id IN (SELECT id FROM activity ORDER BY id LIMIT ?) AND at < ?`, limit, fmtTime(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
