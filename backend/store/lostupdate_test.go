package store

import (
	"context"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"

	"github.com/agentdesk/agentdesk/backend/model"
)

// TestWriteLoadsTheCommittedTask: a write that changes a task loads it as the database
// holds it, whatever statement made the last change. (The writer once kept the tasks it
// saved and trusted marks placed by hand in every statement that changed one; a change
// without its mark was then written over by the next save: a lost update.)
func TestWriteLoadsTheCommittedTask(t *testing.T) { pgtest.Engines(t, testWriteLoadsTheCommittedTask) }

func testWriteLoadsTheCommittedTask(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	now := time.Now()
	task := &model.Task{ProjectID: "p", Summary: "first", Status: "Todo", Source: "user", TaskType: "standard", CreatedAt: now, UpdatedAt: now}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	// change loads the task, sets its status and saves it, as the service's task changes do.
	change := func(status string) {
		t.Helper()
		if err := s.Write(ctx, Author{}, func(tx *Tx) error {
			got, err := tx.Task(ctx, "p", task.ID, true)
			if err != nil {
				return err
			}
			got.Status, got.UpdatedAt = status, time.Now()
			return tx.UpdateTask(ctx, got)
		}); err != nil {
			t.Fatal(err)
		}
	}
	change("Doing")
	// A statement that marks nothing, as a new one might.
	if err := s.Write(ctx, Author{}, func(tx *Tx) error {
		_, err := tx.exec(ctx, `UPDATE tasks SET summary = 'second' WHERE id = $1`, task.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	change("Done")
	got, err := s.Read().Task(ctx, "p", task.ID, true)
	if err != nil {
		t.Fatal(err)
	}
	if got.Summary != "second" || got.Status != "Done" {
		t.Fatalf("task after the changes: summary %q, status %q; want second, Done (an update was lost)", got.Summary, got.Status)
	}
}
