package store

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestPostgresListPlan: on PostgreSQL a page of a project's tasks is read through the
// project's index, not by walking the primary key and filtering out the other projects'
// tasks. The 10,000 tasks of project b come after 5,000 of project a. Each page (the
// tasks, and the ids and versions the task cache reads) is explained with its
// parameters (a custom plan) and prepared (the generic plan a prepared statement turns
// to), twice: with the statistics autovacuum took while the table held a's tasks only
// (a server right after a bulk of creates), and after ANALYZE. (With project_id = ?
// most of them walked tasks_pkey past a's 5,000 tasks, in both.)
// A table never analyzed at all is left out: PostgreSQL then knows neither how many
// tasks a project has nor how they lie, and reads the project's tasks and sorts them
// until autovacuum's first ANALYZE, within a minute (agentdesk migrate runs one).
func TestPostgresListPlan(t *testing.T) {
	ctx := context.Background()
	db, err := postgres.Open(ctx, pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`ALTER TABLE tasks SET (autovacuum_enabled = off)`, // the test takes the statistics
		`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ('a', 'a', 'default', 's', ''), ('b', 'b', 'default', 's', '')`,
		`INSERT INTO tasks (project_id, summary, details, status, source, task_type, created_at, updated_at)
			SELECT 'a', 'task ' || g, 'details', CASE WHEN g % 3 = 0 THEN 'Done' ELSE 'Pending' END,
				'api', '', '2026-11-24T00:00:00Z', '2026-11-24T00:00:00Z' FROM generate_series(1, 5000) g`,
		`ANALYZE tasks`,
		`INSERT INTO tasks (project_id, summary, details, status, source, task_type, created_at, updated_at)
			SELECT 'b', 'task ' || g, 'details', CASE WHEN g % 3 = 0 THEN 'Done' ELSE 'Pending' END,
				'api', '', '2026-11-24T00:00:00Z', '2026-11-24T00:00:00Z' FROM generate_series(1, 10000) g`,
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	conn, err := db.Conn(ctx) // PREPARE and plan_cache_mode hold for one session
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	explain := func(q string) string {
		rows, err := conn.QueryContext(ctx, q)
		if err != nil {
			t.Fatalf("%s: %v", q, err)
		}
		defer rows.Close()
		var plan []string
		for rows.Next() {
			var line string
			if err := rows.Scan(&line); err != nil {
				t.Fatal(err)
			}
			plan = append(plan, strings.TrimSpace(line))
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		return strings.Join(plan, "\n")
	}
	pages := []struct {
		name  string
		f     TaskFilter
		index string
	}{
		{"first page", TaskFilter{ProjectID: "b", Limit: 50}, "tasks_project "},
		{"a later page", TaskFilter{ProjectID: "b", Limit: 50, AfterID: 9000}, "tasks_project "},
		{"newest first", TaskFilter{ProjectID: "b", Limit: 50, Desc: true}, "tasks_project "},
		{"newest first, a later page", TaskFilter{ProjectID: "a", Limit: 50, Desc: true, AfterID: 4000}, "tasks_project "},
		{"one status", TaskFilter{ProjectID: "b", Status: "Done", Limit: 50}, "tasks_project_status "},
	}
	selects := []string{
		`SELECT ` + postgresSQL.taskColumns + ` FROM tasks t LEFT JOIN agents a ON a.id = t.agent_id`, // Tasks
	}
	for _, stats := range []string{"statistics of a's tasks", "after ANALYZE"} {
		if stats == "after ANALYZE" {
			if _, err := conn.ExecContext(ctx, `ANALYZE tasks`); err != nil {
				t.Fatal(err)
			}
		}
		for c := range len(pages) * len(selects) {
			p := pages[c/len(selects)]
			q, args := p.f.page(selects[c%len(selects)], postgresSQL)
			literals := make([]string, len(args))
			for j, a := range args {
				if s, ok := a.(string); ok {
					literals[j] = "'" + s + "'" // the test's own ids: nothing to escape
				} else {
					literals[j] = fmt.Sprint(a)
				}
			}
			name := fmt.Sprintf("p%d_%d", c, len(stats))
			if _, err := conn.ExecContext(ctx, `PREPARE `+name+` AS `+q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
			for _, mode := range []string{"force_custom_plan", "force_generic_plan"} {
				if _, err := conn.ExecContext(ctx, `SET plan_cache_mode = `+mode); err != nil {
					t.Fatal(err)
				}
				plan := explain(`EXPLAIN EXECUTE ` + name + `(` + strings.Join(literals, ", ") + `)`)
				if !strings.Contains(plan, "using "+p.index) || strings.Contains(plan, "tasks_pkey on tasks t") {
					t.Errorf("%s (%s, %s) does not read %s:\n%s\n%s", p.name, mode, stats, p.index, q, plan)
				}
			}
		}
	}
}

// TestPostgresFirstAnalyze: a PostgreSQL store analyzes the tasks table once it holds
// enough tasks and has never been analyzed, rather than leave task lists without
// statistics until autovacuum's next pass (turned off here).
func TestPostgresFirstAnalyze(t *testing.T) {
	ctx := context.Background()
	url := pgtest.DB(t)
	db, err := postgres.Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	for _, q := range []string{
		`ALTER TABLE tasks SET (autovacuum_enabled = off)`,
		`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ('p', 'p', 'default', 's', '')`,
		fmt.Sprintf(`INSERT INTO tasks (project_id, summary, details, status, source, task_type, created_at, updated_at)
			SELECT 'p', 'task', '', 'Todo', 'api', '', '', '' FROM generate_series(1, %d)`, postgres.FirstAnalyzeTasks),
	} {
		if _, err := db.ExecContext(ctx, q); err != nil {
			t.Fatalf("%s: %v", q, err)
		}
	}
	every := postgres.FirstAnalyzeEvery
	postgres.FirstAnalyzeEvery = 20 * time.Millisecond
	t.Cleanup(func() { postgres.FirstAnalyzeEvery = every })
	loc, err := ParseDB(url)
	if err != nil {
		t.Fatal(err)
	}
	s, err := OpenLocation(ctx, loc, t.TempDir()+"/agentdesk.db", Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for deadline := time.Now().Add(10 * time.Second); ; {
		var analyzed bool
		if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stats WHERE tablename = 'tasks' AND attname = 'project_id')`).Scan(&analyzed); err != nil {
			t.Fatal(err)
		}
		if analyzed {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the tasks table has no statistics 10 s after the store opened")
		}
		time.Sleep(10 * time.Millisecond) // polling the condition
	}
}
