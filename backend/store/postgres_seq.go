package store

import "hash/fnv"

// Project locks on PostgreSQL, where each write is a transaction of its own and several
// servers write to one database (pgwrite.go). A write of a project takes the project's
// lock (a transaction-scoped advisory lock) with its BEGIN and keeps it to its commit:
// the project's writes run one at a time, on every server. So what a write reads of its
// project (a task's version for If-Match, a budget, an agent) is still so when it
// commits, and no two writes lock the project's hot rows (its task_counts, its tasks,
// its projects row) in different orders. The service names the project of every change
// made for a principal of a project (Store.WriteIn). A write that names none takes no
// lock; its events are still numbered in order (pgwrite.go).

// projectLockKey is the advisory lock key of a project. Two projects whose keys
// collide only wait for each other.
func projectLockKey(projectID string) int64 {
	h := fnv.New64a()
	h.Write([]byte("agentdesk.event_seq:"))
	h.Write([]byte(projectID))
	return int64(h.Sum64())
}
