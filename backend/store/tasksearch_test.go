package store

import (
	"context"
	"database/sql"
	"maps"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/sqlite"
)

// TestTaskSearchIndex: migration 00021 notes the tasks there already for the search
// index (IndexTaskSearch fills it) and counts them per status; its triggers keep
// the index in step with inserts, text changes and deletes (a status change, which
// writes the same text again, leaves it alone); searches match every word by prefix,
// case and accents ignored, combined with status, paging and order; Down drops it all.
func TestTaskSearchIndex(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentdesk.db")
	migrateTo(t, path, 15)
	db, err := sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ('p', 'p', 'default', 's', '2026-01-01T00:00:00.000000Z'),
		   ('q', 'q', 'other', 's', '2026-01-01T00:00:00.000000Z')`,
		`INSERT INTO tasks (id, project_id, summary, details, status, source, task_type, created_at, updated_at) VALUES
		   (1, 'p', 'Deploy the café', 'after the review', 'Todo', 'user', 'standard', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z'),
		   (2, 'p', 'Write notes', 'deployment checklist', 'Done', 'user', 'standard', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z'),
		   (3, 'q', 'Deploy elsewhere', '', 'Todo', 'user', 'standard', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	find := func(f TaskFilter) []int64 {
		t.Helper()
		// What the triggers noted is indexed first (as the service does before a
		// search), two tasks a pass so that a pass that leaves some for the next runs too.
		err := s.Write(ctx, Author{}, func(tx *Tx) error {
			for more := true; more; {
				var err error
				if more, err = tx.IndexTaskSearch(ctx, 2); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if behind, err := s.Read().TaskSearchBehind(ctx); err != nil || behind {
			t.Fatalf("tasks still wait to be indexed: %v %v", behind, err)
		}
		f.ProjectID = "p"
		tasks, _, err := s.Read().Tasks(ctx, f)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for _, task := range tasks {
			ids = append(ids, task.ID)
		}
		return ids
	}
	expect := func(f TaskFilter, want ...int64) {
		t.Helper()
		if got := find(f); !slices.Equal(got, want) {
			t.Errorf("search %+v: %v, want %v", f, got, want)
		}
	}
	// The counts the triggers keep (task_counts) equal a count of the tasks, at every step.
	sameCounts := func(when string) {
		t.Helper()
		for _, pid := range []string{"p", "q"} {
			kept, err := s.Read().TaskCounts(ctx, TaskFilter{ProjectID: pid})
			if err != nil {
				t.Fatal(err)
			}
			truth, err := s.Read().countRows(ctx, `SELECT status, COUNT(*) FROM tasks WHERE project_id = $1 GROUP BY status`, pid)
			if err != nil {
				t.Fatal(err)
			}
			if !maps.Equal(kept, truth) {
				t.Errorf("%s: project %s counts %v, the tasks say %v", when, pid, kept, truth)
			}
		}
	}
	sameCounts("after the migration")

	// The tasks written before the migration are found; another project's are not.
	expect(TaskFilter{Query: "deploy"}, 1, 2)     // prefix: deployment
	expect(TaskFilter{Query: "CAFE"}, 1)          // case and accents
	expect(TaskFilter{Query: "deploy review"}, 1) // every word
	expect(TaskFilter{Query: "deploy", Status: "Done"}, 2)
	expect(TaskFilter{Query: "deploy", Limit: 1}, 1)
	expect(TaskFilter{Query: "deploy", Desc: true}, 2, 1)
	expect(TaskFilter{Query: `deploy* -"(:`}, 1, 2) // FTS5 syntax is only words here
	expect(TaskFilter{Query: "nothing"})

	now := time.Now().UTC()
	var task *model.Task
	err = s.Write(ctx, Author{}, func(tx *Tx) error {
		task = &model.Task{ProjectID: "p", Summary: "Plan the launch", Details: "rocket", Status: "Backlog", Source: "user", TaskType: "standard", CreatedAt: now, UpdatedAt: now}
		return tx.InsertTask(ctx, task)
	})
	if err != nil {
		t.Fatal(err)
	}
	expect(TaskFilter{Query: "rock"}, task.ID)
	update := func(change func(*model.Task)) {
		t.Helper()
		change(task)
		if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.UpdateTask(ctx, task) }); err != nil {
			t.Fatal(err)
		}
	}
	sameCounts("after an insert")
	update(func(t *model.Task) { t.Status = "Doing" }) // same text: the index is not touched
	sameCounts("after a status change")
	expect(TaskFilter{Query: "launch"}, task.ID)
	update(func(t *model.Task) { t.Summary = "Plan the party" })
	expect(TaskFilter{Query: "launch"})
	expect(TaskFilter{Query: "party rocket"}, task.ID)
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.DeleteTask(ctx, "p", task.ID) }); err != nil {
		t.Fatal(err)
	}
	expect(TaskFilter{Query: "party"})
	sameCounts("after a delete")
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { _, err := tx.DeleteTasksWithStatus(ctx, "p", "Done", 0); return err }); err != nil {
		t.Fatal(err)
	}
	sameCounts("after deleting the Done tasks")
	// The index holds exactly the tasks' text: FTS5's own check of external content.
	if err := s.Write(ctx, Author{}, func(tx *Tx) error {
		_, err := tx.exec(ctx, `INSERT INTO tasks_fts (tasks_fts, rank) VALUES ('integrity-check', 1)`)
		return err
	}); err != nil {
		t.Errorf("integrity-check: %v", err)
	}
	counts, err := s.Read().TaskCounts(ctx, TaskFilter{ProjectID: "p", Query: "deploy"})
	if err != nil || counts["Todo"] != 1 || len(counts) != 1 { // task 2, Done, is deleted
		t.Errorf("counts of a search: %v %v", counts, err)
	}
	s.Close()

	migrateTo(t, path, 15)
	db, err = sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT COUNT(*) FROM sqlite_master WHERE name LIKE 'tasks_fts%' OR name LIKE 'task_counts%'`).Scan(&n); err != nil || n != 0 {
		t.Errorf("after Down: %d tasks_fts or task_counts objects left (%v)", n, err)
	}
	if _, err := db.Exec(`UPDATE tasks SET summary = 'x' WHERE id = 1`); err != nil {
		t.Errorf("after Down, a task's text cannot change: %v", err)
	}
}
