package store

import (
	"context"
	"hash/fnv"
)

// Project locks on PostgreSQL, where each write is a transaction of its own and several
// servers write to one database (pgwrite.go). A write of a project takes the project's
// lock (a transaction-scoped advisory lock) with its BEGIN and keeps it to its commit:
// the project's writes run one at a time, on every server. So what a write reads of its
// project (a task's version for If-Match, a budget, an agent) is still so when it
// commits, and no two writes lock the project's hot rows (its task_counts, its tasks,
// its projects row) in different orders. A write says its project through its context
// (WritingIn; the service's acting does it for every change made for a principal of a
// project). A write that names none takes no lock; its events are still numbered in
// order (pgwrite.go).

type projectKey struct{}

// WritingIn marks the writes made with ctx as changes of the project: on PostgreSQL
// each takes the project's lock before it runs.
func WritingIn(ctx context.Context, projectID string) context.Context {
	return context.WithValue(ctx, projectKey{}, projectID)
}

// writingIn is the project WritingIn gave ctx, or "".
func writingIn(ctx context.Context) string {
	p, _ := ctx.Value(projectKey{}).(string)
	return p
}

// projectLockKey is the advisory lock key of a project. Two projects whose keys
// collide only wait for each other.
func projectLockKey(projectID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("agentdesk.event_seq:"))
	h.Write([]byte(projectID))
	return int64(h.Sum64())
}
