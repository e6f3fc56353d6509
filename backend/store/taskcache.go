package store

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"sync"

	"github.com/agentdesk/agentdesk/backend/model"
)

// taskCache keeps the JSON of the tasks that REST lists have sent, so that a page of
// unchanged tasks costs one query (their ids) instead of decoding every column of every
// task and step (the driver locks a mutex per column read) and encoding them again. It
// holds the JSON alone (about 650 bytes a task) and its version, not the decoded task: lists of structs
// (GraphQL) read the database.
//
// Every write that changes what a task looks like marks it changed (Tx.taskChanged), or
// marks all tasks changed when one change reaches many (an agent deleted, a skill
// renamed); the writer drops them once the write commits. A list that began reading
// before such a change does not put what it read into the cache: it may be the old
// version.
//
// On PostgreSQL another server's change reaches this cache only with its notification,
// after that server has answered: a list sent through this server right after it could
// be stale. So there each entry keeps the task's version, which every change of a task
// raises (service.saveTask; the ETag is made of it), and a page is sent from the cache
// only when the versions the database holds now, read with the ids, are those cached.
type taskCache struct {
	mu      sync.Mutex
	seq     uint64           // counts the invalidations
	changed map[int64]uint64 // task id -> seq of its last change
	allAt   uint64           // seq of the last change that may have touched any task
	m       map[int64]cachedTask
	bytes   int // the JSON held
}

// cachedTask is a task's JSON and the version it was read at.
type cachedTask struct {
	json    json.RawMessage
	version int64
}

// maxCachedTaskBytes bounds the JSON the cache holds; past it, the cache starts over.
const maxCachedTaskBytes = 12 << 20

// begin is called before a read of tasks that may be cached: the read's results are
// cached only if none of them changed after this point.
func (c *taskCache) begin() uint64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.seq
}

// lookup gives the cached JSON of ids, in order, or false if any is missing. With
// versions (PostgreSQL), each task's cached version must be the one given.
func (c *taskCache) lookup(ids, versions []int64) ([]model.EncodedTask, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]model.EncodedTask, len(ids))
	for i, id := range ids {
		e, ok := c.m[id]
		if !ok || versions != nil && e.version != versions[i] {
			return nil, false
		}
		out[i] = model.EncodedTask{ID: id, JSON: e.json}
	}
	return out, true
}

// store caches tasks, read at versions, by a read that began at since, but for those
// changed since.
func (c *taskCache) store(tasks []model.EncodedTask, versions []int64, since uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.allAt > since {
		return
	}
	if c.m == nil {
		c.m = make(map[int64]cachedTask, len(tasks))
	}
	for i, t := range tasks {
		if c.changed[t.ID] > since {
			continue
		}
		if c.bytes+len(t.JSON) > maxCachedTaskBytes {
			clear(c.m)
			c.bytes = 0
		}
		c.bytes += len(t.JSON) - len(c.m[t.ID].json)
		c.m[t.ID] = cachedTask{json: t.JSON, version: versions[i]}
	}
}

// maxChangedIDs bounds the record of which task changed when. Reads take milliseconds,
// so only the last few changes matter to them; past the bound the record starts over and
// the reads begun before that cache nothing (allAt). (It was 1<<20 entries: tens of MiB
// once a server had changed that many tasks, which the hour's soak showed as RSS creeping
// up for 45 minutes.)
const maxChangedIDs = 4096

// invalidate forgets the tasks of ids, or every task.
func (c *taskCache) invalidate(ids []int64, all bool) {
	if len(ids) == 0 && !all {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	c.seq++
	if all {
		c.allAt = c.seq // and the record of single changes is no longer needed
		clear(c.m)
		c.bytes = 0
		c.changed = nil
		return
	}
	if c.changed == nil || len(c.changed)+len(ids) > maxChangedIDs {
		// allAt stands for the changes no longer recorded one by one. What the cache
		// holds stays: every change dropped its task from it when it came.
		c.allAt = c.seq
		c.changed = make(map[int64]uint64, min(len(ids), maxChangedIDs))
	}
	for _, id := range ids {
		c.changed[id] = c.seq
		c.bytes -= len(c.m[id].json)
		delete(c.m, id)
	}
}

// TasksJSON lists the tasks of Tasks as REST lists send them, from the cache when every
// task of the page is in it (one query: their ids, on PostgreSQL with their versions).
// Outside a write only.
func (r Reader) TasksJSON(ctx context.Context, f TaskFilter) ([]model.EncodedTask, bool, error) {
	if r.tasks == nil {
		return nil, false, errors.New("TasksJSON reads the read pool")
	}
	r.watch.check(ctx) // another process's changes (foreign.go)
	since := r.tasks.begin()
	if f.Streamed {
		// A page of a whole list: most pages of a long list are not cached, so the ids
		// query would only come before the read of the tasks themselves.
		return r.encodeTasks(ctx, f, since)
	}
	var ids, versions []int64
	var err error
	if r.pg {
		ids, versions, err = r.idVersions(ctx, f)
	} else {
		q, args := f.page(`SELECT t.id FROM tasks t`, r.pg)
		ids, err = r.ids(ctx, q, args...)
	}
	if err != nil {
		return nil, false, err
	}
	more := false
	if f.Limit > 0 && len(ids) > f.Limit {
		ids, more = ids[:f.Limit], true
	}
	if cached, ok := r.tasks.lookup(ids, versions); ok {
		return cached, more, nil
	}
	return r.encodeTasks(ctx, f, since)
}

// idVersions reads the ids and versions of f's page.
func (r Reader) idVersions(ctx context.Context, f TaskFilter) (ids, versions []int64, err error) {
	q, args := f.page(`SELECT t.id, t.version FROM tasks t`, r.pg)
	rows, err := r.query(ctx, q, args...)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var id, v int64
		if err := rows.Scan(&id, &v); err != nil {
			return nil, nil, err
		}
		ids, versions = append(ids, id), append(versions, v)
	}
	return ids, versions, rows.Err()
}

// encodeTasks reads the tasks of f and encodes them, caching them unless f is streamed.
func (r Reader) encodeTasks(ctx context.Context, f TaskFilter, since uint64) ([]model.EncodedTask, bool, error) {
	tasks, more, err := r.Tasks(ctx, f)
	if err != nil {
		return nil, false, err
	}
	out := make([]model.EncodedTask, len(tasks))
	versions := make([]int64, len(tasks))
	var buf []byte
	for i := range tasks {
		if buf, err = tasks[i].AppendJSON(buf[:0]); err != nil { // model/taskjson.go
			return nil, false, err
		}
		out[i] = model.EncodedTask{ID: tasks[i].ID, JSON: bytes.Clone(buf)} // kept: exactly its size
		versions[i] = tasks[i].Version
	}
	if !f.Streamed {
		r.tasks.store(out, versions, since)
	}
	return out, more, nil
}
