package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/migrations"
)

// migrateTo brings the database at path to schema version v (up or down).
func migrateTo(t *testing.T, path string, v int64) {
	t.Helper()
	db, err := sql.Open("sqlite", dsn(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	sub, _ := fs.Sub(migrations.FS, ".")
	p, err := goose.NewProvider(database.DialectSQLite3, db, sub)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	current, err := p.GetDBVersion(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if current < v {
		_, err = p.UpTo(ctx, v)
	} else {
		_, err = p.DownTo(ctx, v)
	}
	if err != nil {
		t.Fatalf("migrate to %d: %v", v, err)
	}
}

// TestStepsByTaskMigration: migrations 00009 and 00010 move the steps of an existing
// database into the table keyed by task and position, then into their task's row,
// keeping their order, titles and statuses, and give them the derived ids; the Down
// migrations bring back the table keyed by task and position, then the stored ids.
func TestStepsByTaskMigration(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agentdesk.db")
	migrateTo(t, path, 8)
	db, err := sql.Open("sqlite", dsn(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ('p', 'p', 'default', 's', '2026-01-01T00:00:00.000000Z')`,
		`INSERT INTO tasks (id, project_id, summary, status, source, task_type, created_at, updated_at) VALUES
		   (7, 'p', 'seven', 'Todo', 'user', 'standard', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z'),
		   (9, 'p', 'nine', 'Todo', 'user', 'standard', '2026-01-01T00:00:00.000000Z', '2026-01-01T00:00:00.000000Z')`,
		// Old ids were rowids, in insertion order; position, not id, orders a task's steps.
		`INSERT INTO steps (id, task_id, position, title, status) VALUES
		   (20, 7, 1, 'second', 'pending'), (21, 7, 0, 'first', 'completed'), (22, 9, 0, 'only', 'in_progress')`,
	} {
		if _, err := db.Exec(q); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.Read().Task(context.Background(), "p", 7, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []model.Step{{ID: 7000, Title: "first", Status: "completed"}, {ID: 7001, Title: "second", Status: "pending"}}
	if len(task.Steps) != 2 || task.Steps[0] != want[0] || task.Steps[1] != want[1] {
		t.Fatalf("task 7's steps after the migration: %+v, want %+v", task.Steps, want)
	}
	tasks, _, err := s.Read().Tasks(context.Background(), TaskFilter{ProjectID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != 2 || len(tasks[1].Steps) != 1 || tasks[1].Steps[0] != (model.Step{ID: 9000, Title: "only", Status: "in_progress"}) {
		t.Fatalf("the list after the migration: %+v", tasks)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	migrateTo(t, path, 9)
	db, err = sql.Open("sqlite", dsn(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	rows, err := db.Query(`SELECT task_id || ':' || position || ':' || title || ':' || status FROM steps ORDER BY task_id, position`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		got = append(got, s)
	}
	rows.Close()
	if want := "7:0:first:completed 7:1:second:pending 9:0:only:in_progress"; strings.Join(got, " ") != want {
		t.Fatalf("the steps table after 00010's Down migration: %q, want %q", got, want)
	}
	db.Close()

	migrateTo(t, path, 8)
	db, err = sql.Open("sqlite", dsn(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var n int
	if err := db.QueryRow(`SELECT count(*) FROM steps WHERE id = task_id * 1000 + position`).Scan(&n); err != nil || n != 3 {
		t.Fatalf("after the Down migration, %d of 3 steps have their derived id (err %v)", n, err)
	}
	if _, err := db.Exec(`INSERT INTO steps (task_id, position, title, status) VALUES (7, 0, 'again', 'pending')`); err == nil {
		t.Fatal("after the Down migration, (task_id, position) is no longer unique")
	}
}

// TestStepIDsFollowTheTask: a new task's steps have the ids its reads show.
func TestStepIDsFollowTheTask(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	task := &model.Task{ProjectID: "p", Summary: "s", Status: model.StatusTodo, Source: model.SourceUser, TaskType: "standard",
		Steps: []model.Step{{Title: "a", Status: "pending"}, {Title: "b", Status: "pending"}, {Title: "c", Status: "pending"}}}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	stored, err := s.Read().Task(ctx, "p", task.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	for i, st := range stored.Steps {
		if st.ID != model.StepID(task.ID, i) || task.Steps[i].ID != st.ID || st.Title != task.Steps[i].Title {
			t.Fatalf("step %d: created %+v, stored %+v", i, task.Steps[i], st)
		}
	}
}

// TestStepStatusInTheTaskRow: setting a step's status changes that step alone, keeps
// every title as written, and a position outside the task's steps is not found.
func TestStepStatusInTheTaskRow(t *testing.T) {
	s := openTest(t)
	ctx := context.Background()
	titles := []string{`say "hi" <b>&</b>`, "日本語 \u2028 \\ end", ""}
	task := &model.Task{ProjectID: "p", Summary: "s", Status: model.StatusTodo, Source: model.SourceUser, TaskType: "standard"}
	for _, title := range titles {
		task.Steps = append(task.Steps, model.Step{Title: title, Status: "pending"})
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.UpdateStepStatus(ctx, task.ID, 1, "completed") }); err != nil {
		t.Fatal(err)
	}
	for _, position := range []int{-1, 3, 1000} {
		err := s.Write(ctx, func(tx *Tx) error { return tx.UpdateStepStatus(ctx, task.ID, position, "completed") })
		if !errors.Is(err, ErrNotFound) {
			t.Fatalf("step %d of a 3-step task: %v, want ErrNotFound", position, err)
		}
	}
	stored, err := s.Read().Task(ctx, "p", task.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"pending", "completed", "pending"}
	for i, st := range stored.Steps {
		if st.Title != titles[i] || st.Status != want[i] || st.ID != model.StepID(task.ID, i) {
			t.Fatalf("step %d: %+v, want title %q, status %s", i, st, titles[i], want[i])
		}
	}
	if len(stored.Steps) != 3 {
		t.Fatalf("%d steps, want 3", len(stored.Steps))
	}
}
