package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestRefusedTaskInsertAnswersOnlyItsWrite: on PostgreSQL a create's INSERT goes with
// the batch's next round trip (pgdefer.go): the next statement of any write, the next
// write's savepoint, the next ids taken, or the COMMIT. When the database refuses it
// there, only the write that made it fails; the batch's other writes are stored once
// each, with their events in order and without a gap. SQLite refuses it at once, to
// the same outcome.
func TestRefusedTaskInsertAnswersOnlyItsWrite(t *testing.T) {
	pgtest.Engines(t, testRefusedTaskInsertAnswersOnlyItsWrite)
}

func testRefusedTaskInsertAnswersOnlyItsWrite(t *testing.T, engine string) {
	cases := []struct {
		name   string
		writes []string // a write of "x+y" creates x, then y
		stored string
	}{
		{"found by the commit", []string{"a", "boom", "b"}, "a b"},
		{"found by another write's statement", []string{"a", "boom", "agent", "b"}, "a b"},
		{"found by the next write's savepoint", []string{"a", "boom", "in-q", "b"}, "a b"},
		{"found as ids are taken", []string{"a", "boom+c"}, "a"},
		{"a careful write still defers nothing", []string{"boom", "a", "boom", "b"}, "a b"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := openTestOn(t, engine)
			ctx := WritingIn(context.Background(), "p")
			if err := insertProjectIn(s, "q", func() {}); err != nil {
				t.Fatal(err)
			}
			refuseBoom(t, s, engine)
			writes := make([]batchWrite, len(c.writes))
			for i, w := range c.writes {
				writes[i] = batchWrite{ctx: ctx, fn: func(tx *Tx) error {
					switch w {
					case "agent":
						return tx.InsertAgent(ctx, &model.Agent{ProjectID: "p", Name: "agent", CreatedAt: time.Now()})
					case "in-q":
						return tx.InsertAgent(ctx, &model.Agent{ProjectID: "q", Name: "agent", CreatedAt: time.Now()})
					}
					for _, summary := range strings.Split(w, "+") {
						if err := insertBacklogTask(tx, summary); err != nil {
							return err
						}
					}
					return nil
				}}
				if w == "in-q" {
					writes[i].ctx = WritingIn(context.Background(), "q")
				}
			}
			for i, err := range inOneBatch(t, s, writes...) {
				refused := strings.HasPrefix(c.writes[i], "boom")
				if refused != (err != nil) {
					t.Errorf("write %s: %v", c.writes[i], err)
				}
				if refused && err != nil && !strings.Contains(err.Error(), "no_boom") {
					t.Errorf("write %s failed with %v, not the refusal of its INSERT", c.writes[i], err)
				}
			}
			if err := s.Stopped(); err != nil {
				t.Fatalf("the store stopped: %v", err)
			}
			if got := storedSummaries(t, s); got != c.stored {
				t.Errorf("tasks stored: %q, want %q", got, c.stored)
			}
			events, err := s.Read().EventsSince(context.Background(), "p", 0, 100)
			if err != nil {
				t.Fatal(err)
			}
			for i, e := range events {
				if e.Seq != int64(i+1) || e.Type != "task.created" {
					t.Fatalf("event %d: seq %d, %s; want seq %d, task.created", i, e.Seq, e.Type, i+1)
				}
			}
			if want := len(strings.Fields(c.stored)); len(events) != want {
				t.Errorf("%d events, want %d", len(events), want)
			}
			if err := s.Write(ctx, func(tx *Tx) error { return insertBacklogTask(tx, "after") }); err != nil {
				t.Fatalf("the next write: %v", err)
			}
		})
	}
}

// refuseBoom makes the database refuse a task whose summary is "boom", behind the
// store's back: a constraint named no_boom. (PostgreSQL's test databases are emptied
// and used again: the constraint goes with the test.)
func refuseBoom(t *testing.T, s *Store, engine string) {
	t.Helper()
	query := `ALTER TABLE tasks ADD CONSTRAINT no_boom CHECK (summary <> 'boom') NOT VALID`
	if engine == "sqlite" {
		query = `CREATE TRIGGER no_boom BEFORE INSERT ON tasks WHEN NEW.summary = 'boom' BEGIN SELECT RAISE(ABORT, 'no_boom'); END`
	} else {
		t.Cleanup(func() {
			if _, err := s.locks.ExecContext(context.Background(), `ALTER TABLE tasks DROP CONSTRAINT no_boom`); err != nil {
				t.Error(err)
			}
		})
	}
	if err := s.Write(context.Background(), func(tx *Tx) error {
		runBehindItsBack(t, tx, query)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// TestTaskIDsFollowTheWrites: a task's id follows the writes' order, within a batch and
// from one batch to the next. On PostgreSQL ids skip only those taken for waiting writes
// that created no task (pgdefer.go takes one for each). The batch's later statements
// see the tasks, whose INSERTs were sent before them.
func TestTaskIDsFollowTheWrites(t *testing.T) { pgtest.Engines(t, testTaskIDsFollowTheWrites) }

func testTaskIDsFollowTheWrites(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := WritingIn(context.Background(), "p")
	var ids []int64
	create := func(tx *Tx) error {
		task := &model.Task{ProjectID: "p", Summary: "t", Status: "Backlog", Source: "user", TaskType: "standard",
			CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if err := tx.InsertTask(ctx, task); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, "p", "task.created", task, time.Now())
	}
	for range 2 {
		if err := s.Write(ctx, create); err != nil {
			t.Fatal(err)
		}
	}
	// A write after them in the batch sees the tasks: what waits is sent first.
	var seen int
	count := func(tx *Tx) error { return tx.queryRow(ctx, `SELECT COUNT(*) FROM tasks`).Scan(&seen) }
	writes := make([]batchWrite, 5)
	for i := range writes {
		writes[i] = batchWrite{ctx: ctx, fn: create}
	}
	writes[4].fn = count
	for _, err := range inOneBatch(t, s, writes...) {
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen != 6 {
		t.Errorf("a write after 4 creates of its batch saw %d tasks, want 6", seen)
	}
	if err := s.Write(ctx, create); err != nil {
		t.Fatal(err)
	}
	tasks, _, err := s.Read().Tasks(context.Background(), TaskFilter{ProjectID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	for _, task := range tasks {
		ids = append(ids, task.ID)
	}
	want := "[1 2 3 4 5 6 7]"
	if engine == "postgres" {
		// The first create of the batch took five ids, one for each write waiting; the
		// one for the write that only counted is skipped.
		want = "[1 2 3 4 5 6 8]"
	}
	if got := fmt.Sprint(ids); got != want {
		t.Errorf("task ids %s, want %s", got, want)
	}
	// Each event holds its task, made in the same order.
	events, err := s.Read().EventsSince(context.Background(), "p", 0, 100)
	if err != nil {
		t.Fatal(err)
	}
	for i, e := range events {
		data, _ := json.Marshal(e.Data)
		if !strings.Contains(string(data), fmt.Sprintf(`"id":%d,`, ids[i])) {
			t.Errorf("event %d holds %s, not task %d", e.Seq, data, ids[i])
		}
	}
	if len(events) != 7 {
		t.Errorf("%d events, want 7", len(events))
	}
}

// TestOneWriteCreatesManyTasks: a write may create more tasks than a batch keeps
// waiting (maxDeferred, past which they are sent at once): all are stored, in order,
// each with the next id.
func TestOneWriteCreatesManyTasks(t *testing.T) { pgtest.Engines(t, testOneWriteCreatesManyTasks) }

func testOneWriteCreatesManyTasks(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := WritingIn(context.Background(), "p")
	const n = 2*maxDeferred + 3
	if err := s.Write(ctx, func(tx *Tx) error {
		for i := range n {
			if err := insertBacklogTask(tx, fmt.Sprint(i)); err != nil {
				return err
			}
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	tasks, _, err := s.Read().Tasks(context.Background(), TaskFilter{ProjectID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) != n {
		t.Fatalf("%d tasks stored, want %d", len(tasks), n)
	}
	for i, task := range tasks {
		if task.Summary != fmt.Sprint(i) || task.ID != int64(i+1) {
			t.Fatalf("task %d: id %d, summary %q; want id %d, summary %d", i, task.ID, task.Summary, i+1, i)
		}
	}
}

// TestDeferredTaskUpdates: on PostgreSQL a task's UPDATE and a step's go with the
// batch's next round trip too, each guarded to change exactly one row (pgdefer.go).
// Whatever the engine, in one batch: changes of the same task follow one another, each
// version one more than the last; a write that saves a task it read at an older version
// still saves it (as the immediate UPDATE does), at the next version; a step past the
// last, or of a task that is not there, is ErrNotFound for its write alone, as is the
// load of a task that is not there (on PostgreSQL sent with the statements waiting);
// a load after them sees them all, a message added to the conversation too.
func TestDeferredTaskUpdates(t *testing.T) { pgtest.Engines(t, testDeferredTaskUpdates) }

func testDeferredTaskUpdates(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := WritingIn(context.Background(), "p")
	now := time.Now()
	task := &model.Task{ProjectID: "p", Summary: "s", Status: "Todo", Source: "user", TaskType: "standard",
		Steps: []model.Step{{Title: "one", Status: "pending"}, {Title: "two", Status: "pending"}}, CreatedAt: now, UpdatedAt: now}
	if err := s.Write(ctx, func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	stale := *task // read at version 1
	versions := make([]int64, 3)
	change := func(i int, summary string) func(*Tx) error {
		return func(tx *Tx) error {
			got, err := tx.Task(ctx, "p", task.ID, false)
			if err != nil {
				return err
			}
			got.Summary = summary
			if err := tx.UpdateTask(ctx, got); err != nil {
				return err
			}
			versions[i] = got.Version
			return nil
		}
	}
	step := func(id int64, position int) func(*Tx) error {
		return func(tx *Tx) error { return tx.UpdateStepStatus(ctx, id, position, "completed") }
	}
	results := inOneBatch(t, s,
		batchWrite{ctx: ctx, fn: change(0, "a")},
		batchWrite{ctx: ctx, fn: step(task.ID, 0)},
		batchWrite{ctx: ctx, fn: change(1, "b")},
		batchWrite{ctx: ctx, fn: step(task.ID, 2)},     // past the last step
		batchWrite{ctx: ctx, fn: step(task.ID+100, 0)}, // no such task
		batchWrite{ctx: ctx, fn: func(tx *Tx) error {
			saved := stale
			saved.Summary = "from an old read"
			if err := tx.UpdateTask(ctx, &saved); err != nil {
				return err
			}
			versions[2] = saved.Version
			return nil
		}},
		batchWrite{ctx: ctx, fn: step(task.ID, 1)},
		batchWrite{ctx: ctx, fn: func(tx *Tx) error {
			_, err := tx.Task(ctx, "p", task.ID+100, true)
			return err
		}},
		batchWrite{ctx: ctx, fn: func(tx *Tx) error {
			return tx.AppendTaskMessage(ctx, task.ID, model.TaskMessage{Role: "assistant", Content: "hi", CreatedAt: now})
		}},
		batchWrite{ctx: ctx, fn: func(tx *Tx) error {
			got, err := tx.Task(ctx, "p", task.ID, true)
			if err != nil {
				return err
			}
			if len(got.Conversation) != 1 || got.Conversation[0].Content != "hi" || got.Version != 4 {
				return fmt.Errorf("a load after the changes saw version %d, conversation %v", got.Version, got.Conversation)
			}
			return nil
		}},
	)
	for i, err := range results {
		missing := i == 3 || i == 4 || i == 7
		if missing != errors.Is(err, ErrNotFound) || (!missing && err != nil) {
			t.Errorf("write %d: %v", i, err)
		}
	}
	if got := fmt.Sprint(versions); got != "[2 3 4]" {
		t.Errorf("versions after the changes: %s, want [2 3 4]", got)
	}
	got, err := s.Read().Task(context.Background(), "p", task.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary != "from an old read" || got.Version != 4 || got.Steps[0].Status != "completed" || got.Steps[1].Status != "completed" {
		t.Errorf("stored: summary %q, version %d, steps %v; want the last save, version 4, both steps completed", got.Summary, got.Version, got.Steps)
	}
}

// TestTasksOfABatchGoAsOneInsert: on PostgreSQL the tasks a batch creates one after
// another, by one write or several, wait as one INSERT (deferTaskInsert), and
// task_counts follows once per INSERT (migration 00027); a statement deferred between
// them starts a new INSERT after it. Whatever the engine, each task is stored with its
// own fields and counted once.
func TestTasksOfABatchGoAsOneInsert(t *testing.T) { pgtest.Engines(t, testTasksOfABatchGoAsOneInsert) }

func testTasksOfABatchGoAsOneInsert(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := WritingIn(context.Background(), "p")
	question := "which branch?"
	var waiting, done *model.Task
	// PostgreSQL: what waits, as the third write finds it before its read, and as the
	// last leaves it. (The first write takes the ids of all five, as all are queued.)
	var beforeRead, atEnd string
	write := func(fn func(tx *Tx) error) batchWrite { return batchWrite{ctx: ctx, fn: fn} }
	errs := inOneBatch(t, s,
		write(func(tx *Tx) error { return insertBacklogTask(tx, "a") }),
		write(func(tx *Tx) error {
			waiting = &model.Task{ProjectID: "p", Summary: "b", Details: "asks", Status: "Waiting", Source: "agent",
				TaskType: "standard", WaitingDetails: &question, WaitingVersion: 2, CreatedAt: time.Now(), UpdatedAt: time.Now(),
				Steps: []model.Step{{Title: "look", Status: "Done"}, {Title: "ask", Status: "Working"}}}
			return tx.InsertTask(ctx, waiting)
		}),
		write(func(tx *Tx) error {
			if err := insertBacklogTask(tx, "c"); err != nil {
				return err
			}
			beforeRead = deferredShape(tx)
			tasks, _, err := tx.Tasks(ctx, TaskFilter{ProjectID: "p", Status: "Backlog"})
			if err != nil || len(tasks) != 2 {
				return fmt.Errorf("the batch's Backlog tasks: %d, %v", len(tasks), err)
			}
			done = &tasks[1]
			done.Status = "Done"
			return tx.UpdateTask(ctx, done)
		}),
		write(func(tx *Tx) error { return insertBacklogTask(tx, "d") }),
		write(func(tx *Tx) error {
			if err := insertBacklogTask(tx, "e"); err != nil {
				return err
			}
			atEnd = deferredShape(tx)
			return nil
		}),
	)
	for i, err := range errs {
		if err != nil {
			t.Fatalf("write %d: %v", i, err)
		}
	}
	if engine == "postgres" && (beforeRead != "3 tasks" || atEnd != "WITH 2 tasks") {
		t.Errorf("deferred before the read %q, want 3 tasks; at the end %q, want WITH (the UPDATE) and 2 tasks", beforeRead, atEnd)
	}
	if got := storedSummaries(t, s); got != "a b c d e" {
		t.Errorf("tasks stored: %q", got)
	}
	got, err := s.Read().Task(context.Background(), "p", waiting.ID, false)
	if err != nil {
		t.Fatal(err)
	}
	if got.Status != "Waiting" || got.Details != "asks" || got.Source != "agent" || got.WaitingDetails == nil ||
		*got.WaitingDetails != question || got.WaitingVersion != 2 || len(got.Steps) != 2 || got.Steps[1].Title != "ask" ||
		got.Steps[1].Status != "Working" || got.Version != 1 || got.AgentID != nil || got.ConversationID != nil {
		t.Errorf("task b stored as %+v", got)
	}
	counts, err := s.Read().TaskCounts(context.Background(), TaskFilter{ProjectID: "p"})
	if err != nil {
		t.Fatal(err)
	}
	if want := map[string]int64{"Backlog": 3, "Waiting": 1, "Done": 1}; fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("task counts %v, want %v (task %d Done)", counts, want, done.ID)
	}
}

// deferredShape is what waits in the write's batch: "N tasks" for an INSERT of tasks,
// the first word of any other statement.
func deferredShape(tx *Tx) string {
	var shape []string
	for _, d := range tx.b.deferred {
		if d.tasks != nil {
			shape = append(shape, fmt.Sprintf("%d tasks", len(d.tasks.jobs)))
		} else {
			shape = append(shape, strings.Fields(d.query)[0])
		}
	}
	return strings.Join(shape, " ")
}
