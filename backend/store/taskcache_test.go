package store

import (
	"context"
	"encoding/json"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// TestTaskCacheFollowsChanges: lists served from the task cache show every change that
// alters a task: its fields, a step, its skills, a skill renamed, its agent deleted, the
// task deleted; and a read that raced a change does not cache what it read.
func TestTaskCacheFollowsChanges(t *testing.T) { pgtest.Engines(t, testTaskCacheFollowsChanges) }

func testTaskCacheFollowsChanges(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	now := time.Now()
	write := func(fn func(tx *Tx) error) {
		t.Helper()
		if err := s.Write(ctx, Author{}, fn); err != nil {
			t.Fatal(err)
		}
	}
	agent := &model.Agent{ProjectID: "p", Name: "worker", CreatedAt: now}
	skill := &model.Skill{ProjectID: "p", Name: "go", CreatedAt: now, UpdatedAt: now}
	task := &model.Task{ProjectID: "p", Summary: "one", Status: "Todo", Source: "user", TaskType: "standard",
		Steps: []model.Step{{Title: "a", Status: "pending"}}, CreatedAt: now, UpdatedAt: now}
	write(func(tx *Tx) error {
		if err := tx.InsertAgent(ctx, agent); err != nil {
			return err
		}
		if err := tx.InsertSkill(ctx, skill); err != nil {
			return err
		}
		task.AgentID = &agent.ID
		return tx.InsertTask(ctx, task)
	})
	list := func() model.Task {
		t.Helper()
		tasks, _, err := s.Read().TasksJSON(ctx, TaskFilter{ProjectID: "p", Limit: 50})
		if err != nil || len(tasks) != 1 {
			t.Fatalf("list: %v %v", tasks, err)
		}
		var sent model.Task
		if err := json.Unmarshal(tasks[0].JSON, &sent); err != nil || sent.ID != tasks[0].ID {
			t.Fatalf("listed JSON %q: %v", tasks[0].JSON, err)
		}
		// What the cache sends is what the database holds.
		stored, err := s.Read().Task(ctx, "p", task.ID, false)
		if err != nil {
			t.Fatal(err)
		}
		if want, _ := json.Marshal(stored); string(want) != string(tasks[0].JSON) {
			t.Fatalf("listed %s\nstored %s", tasks[0].JSON, want)
		}
		return sent
	}
	list()
	if got := list(); got.AgentName != "worker" || got.Steps[0].Status != "pending" {
		t.Fatalf("cached: %+v", got)
	}
	queries := s.ReadQueries()
	if _, _, err := s.Read().TasksJSON(ctx, TaskFilter{ProjectID: "p", Limit: 50}); err != nil {
		t.Fatal(err)
	}
	if n := s.ReadQueries() - queries; n != 1 {
		t.Fatalf("a cached page took %d queries, want 1 (the ids)", n)
	}

	task.Summary, task.Status = "renamed", "Doing"
	write(func(tx *Tx) error { return tx.UpdateTask(ctx, task) })
	if got := list(); got.Summary != "renamed" || got.Status != "Doing" || !got.IsActive {
		t.Fatalf("after UpdateTask: %+v", got)
	}
	write(func(tx *Tx) error { return tx.UpdateStepStatus(ctx, task.ID, 0, "completed") })
	if got := list(); got.Steps[0].Status != "completed" {
		t.Fatalf("after UpdateStepStatus: %+v", got.Steps)
	}
	write(func(tx *Tx) error { return tx.SetTaskSkills(ctx, task.ID, []int64{skill.ID}) })
	if got := list(); len(got.RequiredSkills) != 1 || got.RequiredSkills[0] != "go" {
		t.Fatalf("after SetTaskSkills: %v", got.RequiredSkills)
	}
	skill.Name = "golang"
	write(func(tx *Tx) error { return tx.UpdateSkill(ctx, skill) })
	if got := list(); len(got.RequiredSkills) != 1 || got.RequiredSkills[0] != "golang" {
		t.Fatalf("after UpdateSkill: %v", got.RequiredSkills)
	}
	write(func(tx *Tx) error { return tx.DeleteAgent(ctx, "p", agent.ID) })
	if got := list(); got.AgentID != nil || got.AgentName != "" {
		t.Fatalf("after DeleteAgent: agent %v %q", got.AgentID, got.AgentName)
	}

	// A read that began before a change must not cache what it read.
	since := s.taskCache.begin()
	stale := []model.EncodedTask{{ID: task.ID, JSON: []byte(`{"stale":true}`)}}
	task.Summary, task.AgentID = "changed meanwhile", nil
	write(func(tx *Tx) error { return tx.UpdateTask(ctx, task) })
	s.taskCache.store(stale, []int64{task.Version}, since) // the version now current
	if got := list(); got.Summary != "changed meanwhile" {
		t.Fatalf("a raced read was cached: %+v", got)
	}

	write(func(tx *Tx) error { return tx.DeleteTask(ctx, "p", task.ID) })
	if tasks, _, err := s.Read().TasksJSON(ctx, TaskFilter{ProjectID: "p", Limit: 50}); err != nil || len(tasks) != 0 {
		t.Fatalf("after DeleteTask: %v %v", tasks, err)
	}
}

// TestTaskCacheAcrossStores: two stores on one database (two servers on one
// PostgreSQL, or the CLI beside a server on SQLite). A page of unchanged tasks is sent
// from the cache, on PostgreSQL too; a change made through the other store shows in the
// very next list, before any notification of it could have arrived: on PostgreSQL a
// task's JSON is sent from the cache only at the version the database holds.
func TestTaskCacheAcrossStores(t *testing.T) { pgtest.Engines(t, testTaskCacheAcrossStores) }

func testTaskCacheAcrossStores(t *testing.T, engine string) {
	ctx := context.Background()
	loc, err := ParseDB(pgtest.DBFor(t, engine, migrateTestPostgres))
	if err != nil {
		t.Fatal(err)
	}
	path := t.TempDir() + "/agentdesk.db"
	var stores [2]*Store
	for i := range stores {
		if stores[i], err = OpenLocation(ctx, loc, path, Options{Synchronous: "NORMAL"}); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { stores[i].Close() })
	}
	a, b := stores[0], stores[1]
	now := time.Now()
	task := &model.Task{ProjectID: "p", Summary: "one", Status: "Todo", Source: "user", TaskType: "standard", CreatedAt: now, UpdatedAt: now}
	if err := a.Write(ctx, Author{}, func(tx *Tx) error {
		if err := tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: now}); err != nil {
			return err
		}
		return tx.InsertTask(ctx, task)
	}); err != nil {
		t.Fatal(err)
	}
	list := func() string {
		t.Helper()
		tasks, _, err := b.Read().TasksJSON(ctx, TaskFilter{ProjectID: "p", Limit: 50})
		if err != nil || len(tasks) != 1 {
			t.Fatalf("list: %v %v", tasks, err)
		}
		return string(tasks[0].JSON)
	}
	list()
	// What b's cache holds for the task at its version is what b sends.
	b.taskCache.store([]model.EncodedTask{{ID: task.ID, JSON: []byte(`{"cached":true}`)}}, []int64{task.Version}, b.taskCache.begin())
	if got := list(); got != `{"cached":true}` {
		t.Fatalf("a page of unchanged tasks was read from the database, not the cache: %s", got)
	}
	task.Summary = "changed through a"
	if err := a.Write(ctx, Author{}, func(tx *Tx) error { return tx.UpdateTask(ctx, task) }); err != nil {
		t.Fatal(err)
	}
	var sent model.Task
	if got := list(); json.Unmarshal([]byte(got), &sent) != nil || sent.Summary != "changed through a" {
		t.Fatalf("b lists %s right after a's change", got)
	}
}

func TestObjectID(t *testing.T) {
	for data, want := range map[string]string{
		`{"id":42,"summary":"x","steps":[{"id":7}]}`: "42",
		`{"id":42}`:                      "42",
		`{"id":"prj_abc","name":"x"}`:    "prj_abc",
		`{"id":-3}`:                      "-3",
		`{"jobId":9,"status":"ok"}`:      "9",
		`{"summary":"x","messageId":11}`: "11",
		`{"idx":5}`:                      "",
		`not json`:                       "",
	} {
		if got := objectID([]byte(data)); got != want {
			t.Errorf("objectID(%s) = %q, want %q", data, got, want)
		}
	}
}

// TestTaskCacheChangeRecordBounded: the record of which task changed when stays small
// however many tasks change, a read that began before the record started over caches
// nothing (it may hold an old version), and what the cache held for unchanged tasks stays.
func TestTaskCacheChangeRecordBounded(t *testing.T) {
	var c taskCache
	enc := func(id int64, v string) []model.EncodedTask {
		return []model.EncodedTask{{ID: id, JSON: json.RawMessage(`"` + v + `"`)}}
	}
	one := []int64{1} // the version read
	c.store(enc(1, "kept"), one, c.begin())
	before := c.begin() // a read of task 2 begins
	for id := int64(100); id < 100+20_000; id++ {
		c.invalidate([]int64{id}, false)
		if len(c.changed) > 10_000 {
			t.Fatalf("after %d changes the record holds %d ids: it grows with the tasks changed", id-99, len(c.changed))
		}
	}
	c.invalidate([]int64{2}, false)     // task 2 changes while that read is under way
	c.store(enc(2, "old"), one, before) // the read ends with the old version: not cached
	if _, ok := c.lookup([]int64{2}, nil); ok {
		t.Fatal("a read begun before the change cached the old version")
	}
	if got, ok := c.lookup([]int64{1}, nil); !ok || string(got[0].JSON) != `"kept"` {
		t.Fatalf("an unchanged task's JSON: %v %v, want it still cached", got, ok)
	}
	c.store(enc(2, "new"), one, c.begin()) // a read begun after it caches
	if got, ok := c.lookup([]int64{2}, nil); !ok || string(got[0].JSON) != `"new"` {
		t.Fatalf("a read begun after the change: %v %v, want it cached", got, ok)
	}
}
