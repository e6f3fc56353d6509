package store

import (
	"context"
	"database/sql"
	"errors"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// TestWrittenTasksFollowTheTransaction: the writer's cache of saved tasks gives back
// what the database holds after every kind of write: a save, a write rolled back, a
// change made without a save, and a commit by another connection to the same file.
func TestWrittenTasksFollowTheTransaction(t *testing.T) {
	verify := VerifyWrittenTasks
	VerifyWrittenTasks = true // every cache hit is also read from the database and compared
	t.Cleanup(func() { VerifyWrittenTasks = verify })
	s := openTest(t)
	ctx := context.Background()
	now := time.Now()
	task := &model.Task{ProjectID: "p", Summary: "s", Status: "Todo", Source: "user", TaskType: "standard",
		Steps: []model.Step{{Title: "a", Status: "pending"}, {Title: "b", Status: "pending"}}, CreatedAt: now, UpdatedAt: now}
	write := func(fn func(tx *Tx) error) error { return s.Write(ctx, fn) }
	if err := write(func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	// change loads the task for update, lets fn change it, and saves it as the service does.
	change := func(fn func(tx *Tx, task *model.Task) error) error {
		return write(func(tx *Tx) error {
			got, err := tx.TaskForUpdate(ctx, "p", task.ID)
			if err != nil {
				return err
			}
			if err := fn(tx, got); err != nil {
				return err
			}
			got.UpdatedAt = time.Now()
			if err := tx.UpdateTask(ctx, got); err != nil {
				return err
			}
			tx.TaskSaved(got)
			return nil
		})
	}
	cached := func() *model.Task { return s.written.m[task.ID] } // read between writes only

	if err := change(func(tx *Tx, got *model.Task) error {
		got.Status = "Doing"
		got.Steps[0].Status = "completed"
		return tx.UpdateStepStatus(ctx, task.ID, 0, "completed")
	}); err != nil {
		t.Fatal(err)
	}
	if c := cached(); c == nil || c.Status != "Doing" || c.Steps[0].Status != "completed" {
		t.Fatalf("after a save the writer holds %+v, want the saved task", c)
	}

	// A write that fails after changing the task leaves the cache as it was.
	refused := errors.New("refused")
	if err := change(func(tx *Tx, got *model.Task) error {
		if got.Status != "Doing" {
			t.Errorf("loaded status %q from the cache, want Doing", got.Status)
		}
		got.Summary = "lost"
		if err := tx.UpdateTask(ctx, got); err != nil {
			return err
		}
		return refused
	}); !errors.Is(err, refused) {
		t.Fatalf("failing write: %v", err)
	}
	if c := cached(); c == nil || c.Summary != "s" {
		t.Fatalf("after a rolled-back write the writer holds %+v, want the last saved task", c)
	}

	// A change without a save drops the task; the next load reads the database.
	if err := write(func(tx *Tx) error { return tx.UpdateStepStatus(ctx, task.ID, 1, "skipped") }); err != nil {
		t.Fatal(err)
	}
	if c := cached(); c != nil {
		t.Fatalf("after a step changed without a save the writer still holds %+v", c)
	}
	if err := change(func(tx *Tx, got *model.Task) error {
		if got.Steps[1].Status != "skipped" {
			t.Errorf("step 1 loaded as %q, want skipped", got.Steps[1].Status)
		}
		got.Conversation = append(got.Conversation, model.TaskMessage{Role: "assistant", Content: "hi", CreatedAt: time.Now()})
		return tx.AppendTaskMessage(ctx, task.ID, got.Conversation[0])
	}); err != nil {
		t.Fatal(err)
	}
	if c := cached(); c == nil || len(c.Conversation) != 1 {
		t.Fatalf("after a save with a message the writer holds %+v", c)
	}

	// Another connection's commit (another process on the file) empties the cache.
	commitElsewhere(t, s, `UPDATE tasks SET summary = 'from elsewhere' WHERE id = ?`, task.ID)
	if err := change(func(tx *Tx, got *model.Task) error {
		if got.Summary != "from elsewhere" {
			t.Errorf("after another connection's commit the task loaded with summary %q", got.Summary)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// The load comes from the cache: a change that bypasses the marks (as a forgotten
	// taskChanged would) is not seen, and the verification of the tests catches it.
	if err := write(func(tx *Tx) error {
		_, err := tx.exec(ctx, `UPDATE tasks SET summary = 'unmarked' WHERE id = ?`, task.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if err := write(func(tx *Tx) error {
		_, err := tx.TaskForUpdate(ctx, "p", task.ID)
		return err
	}); err == nil {
		t.Fatal("the verification let a stale cached task through")
	}
	VerifyWrittenTasks = false
	if err := write(func(tx *Tx) error {
		got, err := tx.TaskForUpdate(ctx, "p", task.ID)
		if err == nil && got.Summary != "from elsewhere" {
			t.Errorf("loaded summary %q, want the cached one", got.Summary)
		}
		return err
	}); err != nil {
		t.Fatal(err)
	}

	// A task of another project is never taken from the cache.
	if err := write(func(tx *Tx) error {
		_, err := tx.TaskForUpdate(ctx, "q", task.ID)
		if !errors.Is(err, ErrNotFound) {
			t.Errorf("another project's load: %v, want ErrNotFound", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}

// commitElsewhere runs query on a connection of its own, as another process would.
func commitElsewhere(t *testing.T, s *Store, query string, args ...any) {
	t.Helper()
	other, err := sql.Open("sqlite", dsn(s.path, true, "FULL", false))
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	if _, err := other.Exec(query, args...); err != nil {
		t.Fatal(err)
	}
}
