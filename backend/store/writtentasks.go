package store

import (
	"context"
	"fmt"
	"reflect"

	"github.com/agentdesk/agentdesk/backend/model"
)

// writtenTasks keeps, for the writer alone, the tasks as the last writes saved them
// (decoded, with their steps and conversation), so that the next change of the same task
// does not read it back: an agent's callbacks, a respond, a status change each start by
// loading the task, and that load (the task row with its agent and skills, the steps,
// the conversation: three queries) was more than half of a callback's work in the writer.
//
// Only the writer goroutine touches it, so it needs no lock. It follows the writer's
// transaction, not what is committed:
//   - a write's changes reach it when the write's savepoint is released (Tx.taskOps, in
//     the order the write made them): a task it saved (Tx.TaskSaved) is put, a task it
//     changed otherwise (Tx.taskChanged, the same marks the read cache uses) is dropped,
//     and a change that may reach any task (everyTaskChanged) empties it;
//   - a write rolled back to its savepoint changed nothing, and its marks are dropped;
//   - a batch that fails as a whole (its transaction rolled back) empties it;
//   - a commit by another connection (PRAGMA data_version, read at each batch's start),
//     e.g. another process on the same file, empties it.
//
// A stale entry would be written back as a lost update, so every statement that changes
// a task, its steps, its conversation or what it shows of its agent and skills marks the
// task changed (tasks.go, skills.go, agentprofile.go), and the tests check every entry
// used against the database (VerifyWrittenTasks).
type writtenTasks struct {
	m           map[int64]*model.Task
	lookups     writerLookups // agents and budgets, with the same life (writerlookups.go)
	dataVersion int64         // PRAGMA data_version at the start of the last batch
}

// maxWrittenTasks bounds the tasks kept; past it, the cache starts over.
const maxWrittenTasks = 1024

// maxWrittenTaskBytes skips tasks whose conversation makes them big: reading those back
// is rarer than copying them on every save.
const maxWrittenTaskBytes = 64 << 10

// VerifyWrittenTasks makes every task taken from the writer's cache also be read from
// the database and compared, failing the write on any difference. Tests turn it on
// (package testenv); it doubles the cost it saves.
var VerifyWrittenTasks = false

// taskOp is a change of the writer's cache: put task, or drop the task id, or drop all.
type taskOp struct {
	id   int64
	task *model.Task // nil: drop
	all  bool
}

func (w *writtenTasks) apply(ops []taskOp) {
	for _, op := range ops {
		switch {
		case op.all:
			clear(w.m)
		case op.task == nil:
			delete(w.m, op.id)
		default:
			if w.m == nil {
				w.m = make(map[int64]*model.Task)
			}
			if len(w.m) >= maxWrittenTasks {
				clear(w.m)
			}
			w.m[op.id] = op.task
		}
	}
}

// forget empties the cache and the lookups kept with it.
func (w *writtenTasks) forget() {
	clear(w.m)
	w.lookups.clear()
}

// checkDataVersion empties the cache if another connection committed since the last
// batch began. Called at the start of each batch, inside its transaction.
func (w *writtenTasks) checkDataVersion(ctx context.Context, r Reader) error {
	if len(w.m) == 0 && w.lookups.empty() && w.dataVersion != 0 {
		return nil // nothing to lose; read it again once something is cached
	}
	var v int64
	if err := r.queryRow(ctx, `PRAGMA data_version`).Scan(&v); err != nil {
		return fmt.Errorf("read data_version: %w", err)
	}
	if v != w.dataVersion {
		w.forget()
		w.dataVersion = v
	}
	return nil
}

// TaskForUpdate loads a task of the project with its steps and conversation, to change
// it in this write: from the writer's cache when the task's last save is there (a copy
// the caller may change), else from the database.
func (t *Tx) TaskForUpdate(ctx context.Context, projectID string, id int64) (*model.Task, error) {
	cached := t.b.written.m[id]
	if cached == nil || cached.ProjectID != projectID || t.ownsChangesOf(id) {
		return t.Task(ctx, projectID, id, true)
	}
	task := cloneTask(cached)
	if VerifyWrittenTasks {
		stored, err := t.Task(ctx, projectID, id, true)
		if err != nil {
			return nil, fmt.Errorf("verify the writer's cached task %d: %w", id, err)
		}
		if !reflect.DeepEqual(task, stored) {
			return nil, fmt.Errorf("the writer's cached task %d differs from the database:\ncached %+v\nstored %+v", id, task, stored)
		}
	}
	return task, nil
}

// ownsChangesOf says whether this write has already changed task id (or every task):
// its changes are not in the cache yet, so the task is read from the database.
func (t *Tx) ownsChangesOf(id int64) bool {
	for _, op := range t.taskOps {
		if op.all || op.id == id {
			return true
		}
	}
	return false
}

// TaskSaved records task, as this write has just stored it with its steps and
// conversation, for the next write that changes it (TaskForUpdate). The caller keeps
// task; the cache holds a copy with the database's time precision.
func (t *Tx) TaskSaved(task *model.Task) {
	size := len(task.Summary) + len(task.Details)
	for _, m := range task.Conversation {
		size += len(m.Content)
	}
	if size > maxWrittenTaskBytes || task.Conversation == nil {
		return
	}
	c := cloneTask(task)
	c.CreatedAt, c.UpdatedAt = parseTime(fmtTime(c.CreatedAt)), parseTime(fmtTime(c.UpdatedAt))
	for i := range c.Conversation {
		c.Conversation[i].CreatedAt = parseTime(fmtTime(c.Conversation[i].CreatedAt))
	}
	c.BlockedReason = "" // said once, in the answer that created the task; not stored
	c.Derive()
	t.taskOps = append(t.taskOps, taskOp{id: c.ID, task: c})
}

// cloneTask copies a task deeply: the copy shares nothing the caller may change.
func cloneTask(t *model.Task) *model.Task {
	c := *t
	c.AgentID = clonePtr(t.AgentID)
	c.ConversationID = clonePtr(t.ConversationID)
	c.WaitingDetails = clonePtr(t.WaitingDetails)
	c.Steps = cloneSlice(t.Steps)
	c.Conversation = cloneSlice(t.Conversation)
	c.RequiredSkills = cloneSlice(t.RequiredSkills)
	return &c
}

func clonePtr[T any](p *T) *T {
	if p == nil {
		return nil
	}
	v := *p
	return &v
}

// cloneSlice copies s, keeping nil nil and empty empty (JSON tells them apart).
func cloneSlice[T any](s []T) []T {
	if s == nil {
		return nil
	}
	return append(make([]T, 0, len(s)), s...)
}
