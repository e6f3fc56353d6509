package postgres

import (
	"context"
	"database/sql"
	"time"
)

// A table PostgreSQL has never analyzed has no statistics: the planner then knows
// neither how many tasks a project has nor how they lie, takes a project for a few dozen
// tasks, and reads all of them and sorts them for each page of a task list (3.4 ms at
// 10,000 tasks, growing with the project) instead of walking the project's index
// (TestPostgresListPlan). Autovacuum's first ANALYZE comes at its next pass, up to a
// minute (autovacuum_naptime) after a bulk of creates into a new database; so until the
// tasks table has statistics, the store looks every FirstAnalyzeEvery and analyzes it
// itself once it holds FirstAnalyzeTasks tasks. Once analyzed (by anyone) it stops: a
// project the statistics do not know yet is then estimated at a task or so, and read
// through its index.
var (
	FirstAnalyzeEvery = 2 * time.Second
	FirstAnalyzeTasks = 1000
)

// AnalyzeTasksFirst runs until the tasks table has statistics or stop closes, looking
// on db every so often (FirstAnalyzeEvery).
func AnalyzeTasksFirst(db *sql.DB, stop <-chan struct{}, every time.Duration) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	go func() { // a query under way ends with the store
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	tick := time.NewTicker(every)
	defer tick.Stop()
	for {
		var analyzed, enough bool
		err := db.QueryRowContext(ctx, `SELECT
			EXISTS (SELECT 1 FROM pg_stats WHERE schemaname = current_schema() AND tablename = 'tasks'),
			(SELECT count(*) FROM (SELECT 1 FROM tasks LIMIT $1) t) >= $1`, FirstAnalyzeTasks).Scan(&analyzed, &enough)
		if err == nil && analyzed {
			return
		}
		if err == nil && enough {
			// Done once it ran: a role that does not own the table is only warned, and
			// autovacuum will do it.
			if _, err := db.ExecContext(ctx, `ANALYZE tasks`); err == nil {
				return
			}
		}
		// An error (the database away for a moment) is looked at again at the next tick.
		select {
		case <-stop:
			return
		case <-tick.C:
		}
	}
}
