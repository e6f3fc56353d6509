package store

import (
	"context"
	"encoding/json"
	"sync"

	"github.com/agentdesk/agentdesk/backend/model"
)

// taskCache keeps the tasks that lists have read, with their steps and skills, so that
// a page of unchanged tasks costs one query for their ids instead of decoding every
// column of every task and step again (the driver locks a mutex per column read).
//
// Every write that changes what a task looks like marks it changed (Tx.taskChanged), or
// marks all tasks changed when one change reaches many (an agent deleted, a skill
// renamed); the writer drops them from the cache once the write commits. A list that
// began reading before such a change does not put what it read into the cache: it may
// be the old version.
type taskCache struct {
	mu      sync.Mutex
	seq     uint64           // counts the invalidations
	changed map[int64]uint64 // task id -> seq of its last change
	allAt   uint64           // seq of the last change that may have touched any task
	m       map[int64]*model.Task
}

// maxCachedTasks bounds the cache (about 1 KiB a task); past it, it starts over.
const maxCachedTasks = 50_000

// begin is called before a read of tasks that may be cached: the read's results are
// cached only if none of them changed after this point.
func (c *taskCache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// lookup gives the cached tasks of ids, in order, or false if any is missing.
func (c *taskCache) lookup(ids []int64) ([]model.Task, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]model.Task, len(ids))
	for i, id := range ids {
		t := c.m[id]
		if t == nil {
			return nil, false
		}
		out[i] = *t
	}
	return out, true
}

// store caches tasks read by a read that began at since, but for those changed since.
func (c *taskCache) store(tasks []model.Task, since uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.allAt > since {
		return
	}
	if c.m == nil || len(c.m)+len(tasks) > maxCachedTasks {
		c.m = make(map[int64]*model.Task, len(tasks))
	}
	for i := range tasks {
		if c.changed[tasks[i].ID] > since || tasks[i].Encoded == nil {
			continue
		}
		t := tasks[i]
		c.m[t.ID] = &t
	}
}

// invalidate forgets the tasks of ids, or every task.
func (c *taskCache) invalidate(ids []int64, all bool) {
	if len(ids) == 0 && !all {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if all {
		c.allAt = c.seq
		clear(c.m)
		clear(c.changed) // allAt covers them
		return
	}
	if c.changed == nil || len(c.changed) > maxCachedTasks {
		// Start the record over; allAt stands in for the changes forgotten.
		c.changed = make(map[int64]uint64)
		c.allAt = c.seq
		clear(c.m)
		return
	}
	for _, id := range ids {
		c.changed[id] = c.seq
		delete(c.m, id)
	}
}

// cachedTasks lists tasks like loadTasks, from the cache when every task of the page is
// in it. Tasks returned share their steps and skills with the cache: callers must not
// change them.
func (r Reader) cachedTasks(ctx context.Context, f TaskFilter) ([]model.Task, bool, error) {
	since := r.tasks.begin()
	where, args := f.where()
	q := `SELECT t.id FROM tasks t WHERE ` + where + ` AND t.id > ? ORDER BY t.id`
	args = append(args, f.AfterID)
	if f.Limit > 0 {
		q += limitClause(f.Limit + 1)
	}
	ids, err := r.ids(ctx, q, args...)
	if err != nil {
		return nil, false, err
	}
	more := false
	if f.Limit > 0 && len(ids) > f.Limit {
		ids, more = ids[:f.Limit], true
	}
	if tasks, ok := r.tasks.lookup(ids); ok {
		return tasks, more, nil
	}
	tasks, more, err := r.loadTasks(ctx, f)
	if err != nil {
		return nil, false, err
	}
	for i := range tasks {
		// Rendered once here, the JSON is what every later list sends of this version.
		tasks[i].Encoded, _ = json.Marshal(tasks[i])
	}
	r.tasks.store(tasks, since)
	return tasks, more, nil
}
