package store

import (
	"context"
	"database/sql"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/database"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store/sqlite"
	"github.com/agentdesk/agentdesk/migrations"
)

// migrateTo brings the database at path to schema version v (up or down).
func migrateTo(t *testing.T, path string, v int64) {
	t.Helper()
	db, err := sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
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
	db, err := sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
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
	db, err = sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
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
	db, err = sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
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
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
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
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.UpdateStepStatus(ctx, task.ID, 1, "completed") }); err != nil {
		t.Fatal(err)
	}
	for _, position := range []int{-1, 3, 1000} {
		err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.UpdateStepStatus(ctx, task.ID, position, "completed") })
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

// TestIDsNeverReusedMigration: migration 00011 rebuilds tasks, agents, conversations and
// messages with AUTOINCREMENT keeping every row, id, index and reference; each sequence
// starts above the highest id the database remembers (rows, events, activity, usage,
// job runs); a deleted newest id is not given out again; foreign keys still cascade; the
// Down migration keeps the rows and ids too.
func TestIDsNeverReusedMigration(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentdesk.db")
	migrateTo(t, path, 10)
	exec := func(db *sql.DB, qs ...string) {
		t.Helper()
		for _, q := range qs {
			if _, err := db.Exec(q); err != nil {
				t.Fatalf("%s: %v", q, err)
			}
		}
	}
	const at = `'2026-01-01T00:00:00.000000Z'`
	db, err := sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	exec(db,
		`INSERT INTO projects (id, name, namespace, token_secret, created_at) VALUES ('p', 'p', 'default', 's', `+at+`)`,
		`INSERT INTO agents (id, project_id, name, created_at, display_name) VALUES (2, 'p', 'two', `+at+`, 'Two'), (5, 'p', 'five', `+at+`, '')`,
		`INSERT INTO conversations (id, uuid, project_id, name, created_at) VALUES (4, 'u4', 'p', 'talk', `+at+`)`,
		`INSERT INTO messages (id, conversation_id, author, author_type, agent_id, content, created_at) VALUES
		   (6, 4, 'me', 'user', NULL, 'hi', `+at+`), (7, 4, 'five', 'agent', 5, 'hello', `+at+`)`,
		`INSERT INTO reactions (message_id, emoji, actor_kind, actor, created_at) VALUES (7, 'ok', 'user', 'me', `+at+`)`,
		`INSERT INTO conversation_participants (conversation_id, kind, name, agent_id, created_at) VALUES (4, 'agent', 'five', 5, `+at+`)`,
		`INSERT INTO tasks (id, project_id, agent_id, conversation_id, summary, status, source, task_type, waiting_details, waiting_version, created_at, updated_at, steps) VALUES
		   (3, 'p', 5, 4, 'three', 'Waiting', 'user', 'standard', 'which?', 2, `+at+`, `+at+`, '[{"title":"a","status":"completed"}]'),
		   (7, 'p', NULL, NULL, 'seven', 'Todo', 'user', 'standard', NULL, 0, `+at+`, `+at+`, '[]')`,
		`INSERT INTO task_messages (task_id, role, content, created_at) VALUES (3, 'user', 'answer', `+at+`)`,
		`INSERT INTO skills (id, project_id, name, created_at, updated_at) VALUES (1, 'p', 'go', `+at+`, `+at+`)`,
		`INSERT INTO task_skills (task_id, skill_id) VALUES (3, 1)`,
		`INSERT INTO agent_skills (agent_id, skill_id) VALUES (5, 1)`,
		// Ids given out before and deleted since, which the database still remembers:
		// task 12 in the event log, task 9 in a job run, agent 8 in the usage records.
		`INSERT INTO events (project_id, seq, type, data, at, object_id) VALUES ('p', 1, 'task.deleted', '{"id":12}', `+at+`, '12')`,
		`INSERT INTO jobs (id, project_id, name, cron, timezone, summary, catch_up, created_at, updated_at) VALUES (1, 'p', 'j', '* * * * *', 'UTC', 's', 'skip', `+at+`, `+at+`)`,
		`INSERT INTO job_runs (job_id, scheduled_for, ran_at, outcome, task_id, trigger) VALUES (1, `+at+`, `+at+`, 'created', 9, 'manual')`,
		`INSERT INTO usage_records (project_id, agent_id, agent_name, task_id, model, input_tokens, output_tokens, cost_micros, day, at) VALUES ('p', 8, 'gone', 7, 'm', 1, 1, 1, '2026-01-01', `+at+`)`,
	)
	db.Close()

	s, err := Open(ctx, path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	task, err := s.Read().Task(ctx, "p", 3, true)
	if err != nil {
		t.Fatal(err)
	}
	if task.AgentID == nil || *task.AgentID != 5 || task.AgentName != "five" || task.ConversationID == nil || *task.ConversationID != 4 ||
		task.WaitingVersion != 2 || len(task.Steps) != 1 || task.Steps[0].ID != 3000 || len(task.Conversation) != 1 ||
		len(task.RequiredSkills) != 1 || task.RequiredSkills[0] != "go" {
		t.Fatalf("task 3 after the migration: %+v", task)
	}
	// The writer's connection, which ran the migration, enforces foreign keys again:
	// deleting a task takes its conversation and skills along.
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.DeleteTask(ctx, "p", 3) }); err != nil {
		t.Fatal(err)
	}
	newTask := func() int64 {
		t.Helper()
		task := &model.Task{ProjectID: "p", Summary: "new", Status: model.StatusBacklog, Source: model.SourceUser, TaskType: "standard"}
		if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
			t.Fatal(err)
		}
		return task.ID
	}
	if id := newTask(); id != 13 {
		t.Fatalf("the first task after the migration has id %d, want 13 (task 12 was given out before)", id)
	}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.DeleteTask(ctx, "p", 13) }); err != nil {
		t.Fatal(err)
	}
	if id := newTask(); id != 14 {
		t.Fatalf("after deleting the newest task (13), the next has id %d, want 14", id)
	}
	var agentID int64
	if err := s.Write(ctx, Author{}, func(tx *Tx) error {
		a := &model.Agent{ProjectID: "p", Name: "new", CreatedAt: time.Now()}
		err := tx.InsertAgent(ctx, a)
		agentID = a.ID
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if agentID != 9 {
		t.Fatalf("the first agent after the migration has id %d, want 9 (agent 8 was given out before)", agentID)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	db, err = sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	checks := map[string]int{
		`SELECT count(*) FROM task_messages`:                                       0, // task 3's, deleted with it
		`SELECT count(*) FROM task_skills`:                                         0,
		`SELECT count(*) FROM tasks WHERE id IN (7, 14)`:                           2,
		`SELECT count(*) FROM agents WHERE id IN (2, 5, 9)`:                        3,
		`SELECT count(*) FROM agents WHERE id = 2 AND display_name = 'Two'`:        1,
		`SELECT count(*) FROM messages WHERE id IN (6, 7) AND conversation_id = 4`: 2,
		`SELECT count(*) FROM reactions WHERE message_id = 7`:                      1,
		`SELECT count(*) FROM conversation_participants WHERE agent_id = 5`:        1,
		`SELECT count(*) FROM agent_skills WHERE agent_id = 5`:                     1,
		`SELECT count(*) FROM pragma_foreign_key_check`:                            0,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('tasks_project', 'tasks_project_status', 'tasks_agent', 'tasks_conversation', 'conversations_project', 'messages_conversation')`: 6,
		`SELECT count(*) FROM sqlite_schema WHERE name IN ('tasks', 'agents', 'conversations', 'messages') AND sql LIKE '%AUTOINCREMENT%'`:                                                                     4,
		`SELECT count(*) FROM sqlite_schema WHERE name LIKE '%\_new' ESCAPE '\'`:                                                                                                                               0,
	}
	checkCounts(t, db, "", checks)
	// The other ids: above every row copied, even after the newest is deleted.
	exec(db, `DELETE FROM messages WHERE id = 7`)
	res, err := db.Exec(`INSERT INTO messages (conversation_id, author, author_type, content, created_at) VALUES (4, 'me', 'user', 'again', ` + at + `)`)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 8 {
		t.Errorf("a new message after deleting the newest (7) has id %d, want 8", id)
	}
	res, err = db.Exec(`INSERT INTO conversations (uuid, project_id, created_at) VALUES ('u', 'p', ` + at + `)`)
	if err != nil {
		t.Fatal(err)
	}
	if id, _ := res.LastInsertId(); id != 5 {
		t.Errorf("a new conversation has id %d, want 5", id)
	}
	db.Close()

	migrateTo(t, path, 10)
	db, err = sql.Open("sqlite", sqlite.DSN(path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	checkCounts(t, db, "after the Down migration, ", map[string]int{
		`SELECT count(*) FROM tasks WHERE id IN (7, 14)`:        2,
		`SELECT count(*) FROM agents WHERE id IN (2, 5, 9)`:     3,
		`SELECT count(*) FROM messages WHERE id IN (6, 8)`:      2,
		`SELECT count(*) FROM conversations WHERE id IN (4, 5)`: 2,
		`SELECT count(*) FROM reactions`:                        0, // message 7's, deleted above
		`SELECT count(*) FROM pragma_foreign_key_check`:         0,
		`SELECT count(*) FROM sqlite_schema WHERE sql LIKE '%AUTOINCREMENT%' AND name IN ('tasks', 'agents', 'conversations', 'messages')`:                                                                     0,
		`SELECT count(*) FROM sqlite_schema WHERE type = 'index' AND name IN ('tasks_project', 'tasks_project_status', 'tasks_agent', 'tasks_conversation', 'conversations_project', 'messages_conversation')`: 6,
	})
}

// checkCounts runs each count query on db and says which gives another number than the
// one it maps to; when prefixes the messages (e.g. "after the Down migration, ").
func checkCounts(t *testing.T, db *sql.DB, when string, want map[string]int) {
	t.Helper()
	for q, n := range want {
		var got int
		if err := db.QueryRow(q).Scan(&got); err != nil {
			t.Fatalf("%s%s: %v", when, q, err)
		}
		if got != n {
			t.Errorf("%s%s: %d, want %d", when, q, got, n)
		}
	}
}

// TestMigrateAtTheSameTime: processes that open a new database at the same moment (the
// server and a command started together on a new data directory) both find it
// unmigrated; the one that loses a migration to the other reads the version again and
// goes on from there, rather than fail with "duplicate column".
func TestMigrateAtTheSameTime(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "agentdesk.db")
		const openers = 4
		errs := make(chan error, openers)
		start := make(chan struct{})
		for range openers {
			go func() {
				<-start
				s, err := Open(context.Background(), path, Options{})
				if err == nil {
					err = s.Close()
				}
				errs <- err
			}()
		}
		close(start)
		for range openers {
			if err := <-errs; err != nil {
				t.Fatalf("round %d: %v", round, err)
			}
		}
		if v, err := sqlite.SchemaVersion(context.Background(), path); err != nil || v != sqlite.KnownSchema() {
			t.Fatalf("round %d: schema %d (%v), want %d", round, v, err, sqlite.KnownSchema())
		}
	}
}
