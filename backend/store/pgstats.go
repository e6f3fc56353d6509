package store

import (
	"context"
	"time"
)

// A table PostgreSQL has never analyzed has no statistics: the planner then knows
// neither how many tasks a project has nor how they lie, takes a project for a few dozen
// tasks, and reads all of them and sorts them for each page of a task list (3.4 ms at
// 10,000 tasks, growing with the project) instead of walking the project's index
// (TestPostgresListPlan). Autovacuum's first ANALYZE comes at its next pass, up to a
// minute (autovacuum_naptime) after a bulk of creates into a new database; so until the
// tasks table has statistics, the store looks every firstAnalyzeEvery and analyzes it
// itself once it holds firstAnalyzeTasks tasks. Once analyzed (by anyone) it stops: a
// project the statistics do not know yet is then estimated at a task or so, and read
// through its index.
var (
	firstAnalyzeEvery = 2 * time.Second
	firstAnalyzeTasks = 1000
)

// analyzeTasksFirst runs until the tasks table has statistics or the store stops,
// looking every so often.
func (s *postgresEngine) analyzeTasksFirst(every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // a query under way ends with the store
		select {
		case <-s.stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var analyzed, enough bool
		err := s.locks.QueryRowContext(ctx, `SELECT
			EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'tasks'),
			(SELECT count(*) FROM (SELECT 1 FROM tasks LIMIT $1) t) >= $1`, firstAnalyzeTasks).Scan(&analyzed, &enough)
		if err == nil && analyzed {
			return
		}
		if err == nil && enough {
			// Done once it ran: a role that does not own the table is only warned, and
			// autovacuum will do it.
			if _, err := s.locks.ExecContext(ctx, `ANALYZE tasks`); err == nil {
				return
			}
		}
		// An error (the database away for a moment) is looked at again at the next tick.
		select {
		case <-s.stop:
			return
		case <-tick.C:
		}
	}
}
