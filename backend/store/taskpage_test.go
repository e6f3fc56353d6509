package store

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// BenchmarkTaskPage reads the first page of 50 of a project's 10,000 tasks (each with
// three steps), as GET /api/tasks?limit=50 does, and encodes it (model.Task.AppendJSON).
func BenchmarkTaskPage(b *testing.B) {
	s := openTestOn(b, "sqlite")
	ctx := context.Background()
	for n := 0; n < 10_000; n += 1_000 {
		if err := s.Write(ctx, Author{Project: "p"}, func(tx *Tx) error {
			for i := range 1_000 {
				task := &model.Task{ProjectID: "p", Summary: fmt.Sprintf("task %d", n+i), Details: "some details of the task", Status: "Backlog",
					Source: "user", TaskType: "standard", CreatedAt: time.Now(), UpdatedAt: time.Now(),
					Steps: []model.Step{{Title: "one", Status: "pending"}, {Title: "two", Status: "pending"}, {Title: "three", Status: "pending"}}}
				if err := tx.InsertTask(ctx, task); err != nil {
					return err
				}
			}
			return nil
		}); err != nil {
			b.Fatal(err)
		}
	}
	f := TaskFilter{ProjectID: "p", Limit: 50}
	b.Run("read", func(b *testing.B) {
		for b.Loop() {
			if _, _, err := s.Read().Tasks(ctx, f); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("read+encode", func(b *testing.B) {
		buf := make([]byte, 0, 64<<10)
		for b.Loop() {
			tasks, _, err := s.Read().Tasks(ctx, f)
			if err != nil {
				b.Fatal(err)
			}
			buf = buf[:0]
			for _, t := range tasks {
				if buf, err = t.AppendJSON(buf); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}

// TestDecodeSteps: steps read back as written, whether their titles take the plain
// path (decodePlainSteps) or need encoding/json (quotes, backslashes, <, control
// characters, invalid UTF-8, a title that spells the separator).
func TestDecodeSteps(t *testing.T) {
	titles := []string{"one", "", "résumé 🙂", `say "hi"`, `a\b`, "<b>&", "tab\there", "bad \xff utf-8",
		`x","status":"done`, "}]", "[{", "a,b"}
	for _, title := range titles {
		steps := []model.Step{{Title: title, Status: "pending"}, {Title: "last", Status: "done"}}
		raw, err := encodeSteps(steps)
		if err != nil {
			t.Fatal(err)
		}
		got, err := decodeSteps(7, raw)
		if err != nil {
			t.Fatalf("%q: %v", raw, err)
		}
		var want []storedStep
		if err := json.Unmarshal([]byte(raw), &want); err != nil {
			t.Fatal(err)
		}
		if len(got) != 2 || got[0].Title != want[0].Title || got[0].Status != "pending" || got[1].Title != "last" ||
			got[1].Status != "done" || got[0].ID != model.StepID(7, 0) || got[1].ID != model.StepID(7, 1) {
			t.Errorf("%q read back as %+v", raw, got)
		}
	}
	if got, err := decodeSteps(7, "[]"); err != nil || len(got) != 0 {
		t.Errorf("[]: %v, %v", got, err)
	}
	if _, ok := decodePlainSteps(7, `[{"status":"done","title":"x"}]`); ok {
		t.Error("another field order took the plain path")
	}
	if _, err := decodeSteps(7, `[{"title":"x"`); err == nil {
		t.Error("cut-off steps read without an error")
	}
}
