package store

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestA2AStore: a remote agent's row, the state of a task sent to it (stored, changed,
// due or not), and a task's push configs (put twice under one id, listed, due while
// events are after their cursor, deleted), on both engines.
func TestA2AStore(t *testing.T) { pgtest.Engines(t, testA2AStore) }

func testA2AStore(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	agent := &model.Agent{ProjectID: "p", Name: "remote", CreatedAt: now}
	task := &model.Task{ProjectID: "p", Summary: "t", Status: "Todo", Source: "user", TaskType: "standard", CreatedAt: now, UpdatedAt: now}
	write := func(f func(tx *Tx) error) {
		t.Helper()
		if err := s.Write(ctx, Author{}, f); err != nil {
			t.Fatal(err)
		}
	}
	write(func(tx *Tx) error {
		if err := tx.InsertAgent(ctx, agent); err != nil {
			return err
		}
		if err := tx.InsertRemoteAgent(ctx, &RemoteAgent{AgentID: agent.ID, ProjectID: "p", CardURL: "https://a.example/card",
			Card: `{"name":"a"}`, CredentialKind: "bearer", Credential: "k", CreatedAt: now, UpdatedAt: now}); err != nil {
			return err
		}
		task.AgentID = &agent.ID
		return tx.InsertTask(ctx, task)
	})
	r := s.Read()
	ra, err := r.RemoteAgent(ctx, "p", agent.ID)
	if err != nil || ra.CardURL != "https://a.example/card" || ra.Credential != "k" || !ra.CreatedAt.Equal(now) {
		t.Fatalf("remote agent: %+v, %v", ra, err)
	}
	if _, err := r.RemoteAgent(ctx, "other", agent.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("another project's: %v, want ErrNotFound", err)
	}
	if list, err := r.RemoteAgents(ctx, "p"); err != nil || len(list) != 1 {
		t.Fatalf("remote agents: %+v, %v", list, err)
	}

	rt := &RemoteTask{TaskID: task.ID, AgentID: agent.ID, ProjectID: "p", Outbox: "do it", OutboxID: "m1", NextAttemptAt: now, UpdatedAt: now}
	write(func(tx *Tx) error { return tx.SaveRemoteTask(ctx, rt) })
	if due, err := r.DueRemoteTasks(ctx, now); err != nil || len(due) != 1 || due[0].Outbox != "do it" || due[0].Seen == nil {
		t.Fatalf("due at its time: %+v, %v", due, err)
	}
	if due, err := r.DueRemoteTasks(ctx, now.Add(-time.Second)); err != nil || len(due) != 0 {
		t.Fatalf("due before its time: %+v, %v", due, err)
	}
	rt.Outbox, rt.OutboxID, rt.RemoteTaskID, rt.Follow, rt.Seen, rt.Attempts = "", "", "r-1", true, []string{"a1"}, 2
	write(func(tx *Tx) error { return tx.SaveRemoteTask(ctx, rt) })
	got, err := r.RemoteTask(ctx, "p", task.ID)
	if err != nil || !reflect.DeepEqual(got, rt) {
		t.Fatalf("saved again: %+v, %v; want %+v", got, err, rt)
	}
	rt.Follow = false
	write(func(tx *Tx) error { return tx.SaveRemoteTask(ctx, rt) })
	if due, err := r.DueRemoteTasks(ctx, now); err != nil || len(due) != 0 {
		t.Fatalf("nothing to send or ask is not due: %+v, %v", due, err)
	}
	write(func(tx *Tx) error { return tx.DeleteRemoteTask(ctx, task.ID) })
	if _, err := r.RemoteTask(ctx, "p", task.ID); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}

	var last int64
	write(func(tx *Tx) (err error) {
		last, err = tx.LastEventSeq(ctx, "p")
		return err
	})
	c := &PushConfig{ProjectID: "p", TaskID: task.ID, ConfigID: "c1", URL: "https://h.example/1", Secret: "whsec_x", Cursor: last, CreatedAt: now}
	write(func(tx *Tx) error { return tx.PutPushConfig(ctx, c) })
	c.URL, c.Token = "https://h.example/2", "tok"
	write(func(tx *Tx) error { return tx.PutPushConfig(ctx, c) })
	list, err := r.PushConfigs(ctx, "p", task.ID)
	if err != nil || len(list) != 1 || list[0].URL != "https://h.example/2" || list[0].Token != "tok" {
		t.Fatalf("put twice under one id: %+v, %v", list, err)
	}
	if due, err := r.DuePushConfigs(ctx, now); err != nil || len(due) != 0 {
		t.Fatalf("no event after its cursor: %+v, %v", due, err)
	}
	write(func(tx *Tx) error { return tx.AppendEvent(ctx, "p", "task.updated", map[string]int{"k": 1}, now) })
	due, err := r.DuePushConfigs(ctx, now)
	if err != nil || len(due) != 1 {
		t.Fatalf("an event after its cursor: %+v, %v", due, err)
	}
	later := now.Add(time.Minute)
	pc := due[0]
	pc.Attempts, pc.FailingSince, pc.NextAttemptAt = 1, &now, &later
	write(func(tx *Tx) error { return tx.UpdatePushConfig(ctx, &pc) })
	if due, err := r.DuePushConfigs(ctx, now); err != nil || len(due) != 0 {
		t.Fatalf("a retry set for later: %+v, %v", due, err)
	}
	byID, err := r.PushConfigByID(ctx, pc.ID)
	if err != nil || byID.Attempts != 1 || !byID.NextAttemptAt.Equal(later) {
		t.Fatalf("by id: %+v, %v", byID, err)
	}
	write(func(tx *Tx) error { return tx.DeletePushConfig(ctx, "p", task.ID, "c1") })
	if _, err := r.PushConfig(ctx, "p", task.ID, "c1"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted: %v", err)
	}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.DeletePushConfig(ctx, "p", task.ID, "c1") }); !errors.Is(err, ErrNotFound) {
		t.Fatalf("deleted twice: %v, want ErrNotFound", err)
	}
}
