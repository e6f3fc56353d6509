package api

import (
	"context"
	"sync"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// taskCache keeps the JSON of the tasks REST lists sent, each with the version it was
// encoded at. A list reads its page's ids and versions (a cheap query), sends the
// JSON kept for a task whose version is the one read, and reads and encodes the others.
// Every change of what a task's JSON shows raises its version (store.TaskVersion), so
// nothing is ever invalidated: an entry of an older version is simply not used, and
// replaced. Reading and encoding a page of 50 tasks costs about 0.4 ms; its ids and
// versions about a tenth of that.
type taskCache struct {
	mu sync.Mutex
	m  map[int64]encodedTask // task id ->
}

// encodedTask is a task's JSON at a version, and its project.
type encodedTask struct {
	id, version int64
	project     string
	json        []byte
}

// maxCachedPage is the largest page whose tasks the cache keeps and sends: twice the
// board's page of 50 (frontend TASK_PAGE). Larger pages and whole lists are bulk reads
// (tasks.go).
const maxCachedPage = 100

// taskCacheSize bounds the tasks kept (about 6 MB at the typical 600 bytes a task).
const taskCacheSize = 10_000

func newTaskCache() *taskCache { return &taskCache{m: map[int64]encodedTask{}} }

// page is a page of tasks as ListTasks would give it, encoded: from the cache where it
// holds a task at the version read, read and encoded otherwise.
func (tc *taskCache) page(ctx context.Context, svc *service.Service, p *auth.Principal, in service.ListTasksInput) ([]encodedTask, bool, error) {
	versions, more, err := svc.ListTaskVersions(ctx, p, in)
	if err != nil {
		return nil, false, err
	}
	out := make([]encodedTask, len(versions))
	var missing []int64
	tc.mu.Lock()
	for i, v := range versions {
		if e, ok := tc.m[v.ID]; ok && e.version == v.Version && e.project == p.ProjectID {
			out[i] = e
		} else {
			missing = append(missing, v.ID)
		}
	}
	tc.mu.Unlock()
	if len(missing) == 0 {
		return out, more, nil
	}
	tasks, err := svc.TasksByID(ctx, p, missing)
	if err != nil {
		return nil, false, err
	}
	read := make(map[int64]encodedTask, len(tasks))
	for _, t := range tasks {
		raw, err := t.AppendJSON(nil)
		if err != nil {
			return nil, false, err
		}
		read[t.ID] = encodedTask{id: t.ID, version: t.Version, project: t.ProjectID, json: raw}
	}
	kept := out[:0]
	for i, v := range versions {
		if out[i].json == nil {
			e, ok := read[v.ID]
			if !ok {
				continue // deleted between the two reads
			}
			out[i] = e
		}
		kept = append(kept, out[i])
	}
	tc.mu.Lock()
	for _, e := range read {
		if _, ok := tc.m[e.id]; !ok && len(tc.m) >= taskCacheSize {
			for id := range tc.m { // a task at random makes room
				delete(tc.m, id)
				break
			}
		}
		tc.m[e.id] = e
	}
	tc.mu.Unlock()
	return kept, more, nil
}

// appendTask appends a task's JSON (model/taskjson.go).
func appendTask(buf []byte, t model.Task) ([]byte, error) { return t.AppendJSON(buf) }

// appendEncodedTask appends a task's JSON, encoded already.
func appendEncodedTask(buf []byte, t encodedTask) ([]byte, error) { return append(buf, t.json...), nil }

// lastTaskID is the id of a page's task, for the next page's link.
func lastTaskID(t encodedTask) int64 { return t.id }
