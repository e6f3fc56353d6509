package store

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"time"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/model"
)

// The activity trail is the event log seen as an audit trail: who (the principal and
// the interface, from the context of the write), what (the event type), which object
// (the type's prefix and the data's id), when. It is kept longer than the events (90
// days against 7) and indexed by object, so it has a table of its own. Each event row
// carries its actor (AppendEvent); IndexActivity copies the events into the activity in
// bulk, in the background and before every read of the trail, so that a write updates
// the event log's B-trees alone and the activity's get many rows at a time.

// eventAudit is who made an event, through which interface, and the id of its object.
type eventAudit struct{ actorKind, actor, via, objectID string }

func auditOf(a audit.Actor, data []byte) eventAudit {
	if a == (audit.Actor{}) {
		a = audit.System
	}
	return eventAudit{actorKind: a.Kind, actor: a.Name, via: a.Via, objectID: objectID(data)}
}

// IndexActivity copies the events not yet in the activity trail into it, about limit of
// them at most (0: all), and says whether some remain. projects.activity_seq is how far
// each project's trail is filled.
func (t *Tx) IndexActivity(ctx context.Context, limit int) (more bool, err error) {
	type behind struct {
		id       string
		from, to int64
	}
	if err := t.sql.lockActivity(ctx, t); err != nil {
		return false, err
	}
	var projects []behind
	rows, err := t.query(ctx, `SELECT id, activity_seq, event_seq FROM projects WHERE event_seq > activity_seq`)
	if err != nil {
		return false, err
	}
	for rows.Next() {
		var p behind
		if err := rows.Scan(&p.id, &p.from, &p.to); err != nil {
			rows.Close()
			return false, err
		}
		projects = append(projects, p)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return false, err
	}
	budget := int64(limit)
	for _, p := range projects {
		upTo := p.to
		if limit > 0 {
			if budget <= 0 {
				return true, nil
			}
			upTo = min(upTo, p.from+budget)
			budget -= upTo - p.from
		}
		if err := t.copyActivity(ctx, p.id, p.from, upTo); err != nil {
			return false, err
		}
		if _, err := t.exec(ctx, `UPDATE projects SET activity_seq = $1 WHERE id = $2`, upTo, p.id); err != nil {
			return false, err
		}
		more = more || upTo < p.to
	}
	return more, nil
}

// ActivityBehind says whether some events are not in the activity trail yet.
func (r Reader) ActivityBehind(ctx context.Context) (bool, error) {
	var behind bool
	err := r.queryRow(ctx, `SELECT EXISTS (SELECT 1 FROM projects WHERE event_seq > activity_seq)`).Scan(&behind)
	return behind, err
}

// copyActivity copies the project's events after seq from, up to seq upTo, into the
// activity trail, in one statement. Events already pruned have nothing to copy. The
// object's type is the event type's prefix (task.updated: task).
func (t *Tx) copyActivity(ctx context.Context, projectID string, from, upTo int64) error {
	_, err := t.exec(ctx, t.sql.copyActivity, projectID, from, upTo)
	if err != nil {
		return fmt.Errorf("store activity: %w", err)
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
	q := `SELECT id, at, actor_kind, actor, via, action, object_type, object_id, event_seq FROM activity WHERE project_id = $1`
	args := []any{f.ProjectID}
	cond := func(on bool, compare string, v any) { // compare: "column op", then the next $N
		if on {
			args = append(args, v)
			q += " AND " + compare + " $" + strconv.Itoa(len(args))
		}
	}
	cond(f.ObjectType != "", "object_type =", f.ObjectType)
	cond(f.ObjectID != "", "object_id =", f.ObjectID)
	cond(f.Actor != "", "actor =", f.Actor)
	cond(f.Via != "", "via =", f.Via)
	if f.Since != nil {
		cond(true, "at >=", fmtTime(*f.Since))
	}
	if f.Until != nil {
		cond(true, "at <", fmtTime(*f.Until))
	}
	cond(f.Before > 0, "id <", f.Before)
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
	res, err := t.exec(ctx, `DELETE FROM activity WHERE id IN (SELECT id FROM activity ORDER BY id LIMIT $1) AND at < $2`, limit, fmtTime(before))
	if err != nil {
		return 0, err
	}
	return res.RowsAffected()
}
