package store

import (
	"context"

	"github.com/agentdesk/agentdesk/backend/audit"
)

// count notes one query run on the read pool, unless the background runner (package
// jobs, whose context says audit.ViaJob) runs it: its reads come once a second, at any
// moment, and would land inside a test's count of one request's queries.
func (r Reader) count(ctx context.Context) {
	if r.queries != nil && audit.ViaOf(ctx) != audit.ViaJob {
		r.queries.Add(1)
	}
}

// ReadQueries is how many queries callers (requests, commands; not the background
// runner) have run on the read pool since the store opened. Tests use it to prove that
// a list costs a fixed number of queries, not one per row.
func (s *Store) ReadQueries() int64 { return s.readQueries.Load() }
