package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestBatchKeepsAgentsAndBudgets: a batch reads an agent and a budget once, and reads
// them again after any statement of its own that may change them. A change made behind
// the batch's back (the raw transaction, as no other writer can) shows that the second
// read was served from what the batch kept.
func TestBatchKeepsAgentsAndBudgets(t *testing.T) { pgtest.Engines(t, testBatchKeepsAgentsAndBudgets) }

func testBatchKeepsAgentsAndBudgets(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	agent := &model.Agent{ProjectID: "p", Name: "bot", CreatedAt: time.Now()}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertAgent(ctx, agent) }); err != nil {
		t.Fatal(err)
	}
	behindItsBack := func(tx *Tx, query string, args ...any) { runBehindItsBack(t, tx, query, args...) }
	description := func(tx *Tx) string {
		t.Helper()
		a, err := tx.Agent(ctx, "p", agent.ID)
		if err != nil {
			t.Error(err)
			return "(error)"
		}
		return a.Description
	}
	budget := func(tx *Tx) int64 {
		t.Helper()
		b, err := tx.Budget(ctx, "p")
		if errors.Is(err, ErrNotFound) {
			return -1
		}
		if err != nil {
			t.Error(err)
			return -2
		}
		return b.MonthlyMicros
	}
	err := s.Write(ctx, Author{}, func(tx *Tx) error {
		if d := description(tx); d != "" {
			t.Errorf("description %q, want none", d)
			return errStop
		}
		behindItsBack(tx, `UPDATE agents SET description = 'hidden' WHERE id = $1`, agent.ID)
		if d := description(tx); d != "" {
			t.Errorf("description %q after a change the batch did not make: the agent was read again", d)
			return errStop
		}
		// Statements that cannot change an agent keep it.
		task := &model.Task{ProjectID: "p", AgentID: &agent.ID, Summary: "s", Status: "Todo", Source: "user", TaskType: "standard",
			CreatedAt: time.Now(), UpdatedAt: time.Now()}
		if err := tx.InsertTask(ctx, task); err != nil {
			return err
		}
		if d := description(tx); d != "" {
			t.Errorf("description %q after inserting a task: the agent was read again", d)
			return errStop
		}
		// The batch's own change to agents: read again.
		if err := tx.UpdateAgentProfile(ctx, &model.Agent{ID: agent.ID, ProjectID: "p", Description: "told"}); err != nil {
			return err
		}
		if d := description(tx); d != "told" {
			t.Errorf("description %q after the batch changed it, want told", d)
			return errStop
		}

		if b := budget(tx); b != -1 {
			t.Errorf("budget %d, want none", b)
			return errStop
		}
		behindItsBack(tx, `INSERT INTO budgets (project_id, monthly_micros, updated_at) VALUES ('p', 5, 'x')`)
		if b := budget(tx); b != -1 {
			t.Errorf("budget %d after a change the batch did not make: it was read again", b)
			return errStop
		}
		micros := int64(7)
		if err := tx.SetBudget(ctx, "p", &micros, time.Now()); err != nil {
			return err
		}
		if b := budget(tx); b != 7 {
			t.Errorf("budget %d after the batch set it, want 7", b)
			return errStop
		}
		// A DELETE may cascade anywhere: everything is read again.
		behindItsBack(tx, `UPDATE budgets SET monthly_micros = 9`)
		behindItsBack(tx, `UPDATE agents SET description = 'deleted around' WHERE id = $1`, agent.ID)
		if _, err := tx.exec(ctx, `DELETE FROM reactions WHERE message_id = 0`); err != nil {
			return err
		}
		if b, d := budget(tx), description(tx); b != 9 || d != "deleted around" {
			t.Errorf("budget %d, description %q after a DELETE, want 9 and deleted around", b, d)
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		t.Fatal(err)
	}
}

// runBehindItsBack runs a statement in the batch's transaction but not through the
// write (no statementContext): a change the batch does not know of, as no other writer
// can make one.
func runBehindItsBack(t *testing.T, tx *Tx, query string, args ...any) {
	t.Helper()
	if tx.b.pg {
		query = postgresText(query)
	}
	if _, err := tx.b.q.ExecContext(context.Background(), query, args...); err != nil {
		t.Error(err)
	}
}

// TestBatchKeepsConversationsAndParticipants: as agents and budgets, a batch finds a
// conversation once, and knows the participants it added or found, until a statement of
// its own may change them.
func TestBatchKeepsConversationsAndParticipants(t *testing.T) {
	pgtest.Engines(t, testBatchKeepsConversationsAndParticipants)
}

func testBatchKeepsConversationsAndParticipants(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	conv := &model.Conversation{UUID: "c-uuid", ProjectID: "p", CreatedAt: time.Now()}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertConversation(ctx, conv) }); err != nil {
		t.Fatal(err)
	}
	find := func(tx *Tx) int64 { // the conversation's id by its old uuid, or -1
		t.Helper()
		id, err := tx.ConversationID(ctx, "p", "c-uuid")
		if errors.Is(err, ErrNotFound) {
			return -1
		}
		if err != nil {
			t.Error(err)
		}
		return id
	}
	ann := model.Participant{Kind: "user", Name: "ann", CreatedAt: time.Now()}
	bob := model.Participant{Kind: "user", Name: "bob", CreatedAt: time.Now()}
	add := func(tx *Tx, p model.Participant) bool {
		t.Helper()
		added, err := tx.AddParticipant(ctx, conv.ID, p)
		if err != nil {
			t.Error(err)
		}
		return added
	}
	err := s.Write(ctx, Author{}, func(tx *Tx) error {
		if id := find(tx); id != conv.ID {
			t.Errorf("conversation %d, want %d", id, conv.ID)
			return errStop
		}
		runBehindItsBack(t, tx, `UPDATE conversations SET uuid = 'moved' WHERE id = $1`, conv.ID)
		if id := find(tx); id != conv.ID {
			t.Errorf("conversation %d after a change the batch did not make: it was looked up again", id)
			return errStop
		}
		if !add(tx, ann) {
			t.Error("ann was not added")
			return errStop
		}
		runBehindItsBack(t, tx, `DELETE FROM conversation_participants WHERE name = 'ann'`)
		// Statements that cannot change a kept row keep them: a message, another
		// participant (an INSERT that only adds).
		if err := tx.InsertMessage(ctx, &model.Message{ConversationID: conv.ID, Author: "ann", AuthorType: "user", Content: "hi", CreatedAt: time.Now()}); err != nil {
			return err
		}
		if !add(tx, bob) {
			t.Error("bob was not added")
			return errStop
		}
		if id := find(tx); id != conv.ID || add(tx, ann) {
			t.Errorf("conversation %d, ann added again, after a message and a participant: looked up again", id)
			return errStop
		}
		// A DELETE may cascade anywhere: everything is looked up again.
		if _, err := tx.exec(ctx, `DELETE FROM reactions WHERE message_id = 0`); err != nil {
			return err
		}
		if id := find(tx); id != -1 {
			t.Errorf("conversation %d by its old uuid after a DELETE, want none", id)
			return errStop
		}
		if !add(tx, ann) {
			t.Error("ann, removed behind the batch's back, was not added again after a DELETE")
			return errStop
		}
		// The batch's own change to conversations: looked up again.
		if id, err := tx.ConversationID(ctx, "p", "moved"); err != nil || id != conv.ID {
			t.Errorf("conversation %d (%v) by its new uuid", id, err)
			return errStop
		}
		if _, err := tx.exec(ctx, `UPDATE conversations SET uuid = 'moved again' WHERE id = $1`, conv.ID); err != nil {
			return err
		}
		if id, err := tx.ConversationID(ctx, "p", "moved"); !errors.Is(err, ErrNotFound) {
			t.Errorf("conversation %d (%v) by a uuid the batch changed, want not found", id, err)
			return errStop
		}
		return nil
	})
	if err != nil && err != errStop {
		t.Fatal(err)
	}
}

// errStop ends a write whose test failed: t.Fatal must not be called on the writer's goroutine.
var errStop = errors.New("stop")

// A write rolled back to its savepoint may have changed an agent and read it back: the
// batch's later writes read the agent again, as it is without that write.
func TestBatchForgetsARolledBackWrite(t *testing.T) {
	pgtest.Engines(t, testBatchForgetsARolledBackWrite)
}

func testBatchForgetsARolledBackWrite(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	agent := &model.Agent{ProjectID: "p", Name: "bot", CreatedAt: time.Now()}
	if err := s.Write(ctx, Author{}, func(tx *Tx) error { return tx.InsertAgent(ctx, agent) }); err != nil {
		t.Fatal(err)
	}
	refused := errors.New("refused")
	var seen string
	results := inOneBatch(t, s, batchWrite{fn: func(tx *Tx) error {
		if err := tx.UpdateAgentProfile(ctx, &model.Agent{ID: agent.ID, ProjectID: "p", Description: "rolled back"}); err != nil {
			return err
		}
		if _, err := tx.Agent(ctx, "p", agent.ID); err != nil {
			return err
		}
		return refused
	}}, batchWrite{fn: func(tx *Tx) error {
		a, err := tx.Agent(ctx, "p", agent.ID)
		if err == nil {
			seen = a.Description
		}
		return err
	}})
	if !errors.Is(results[0], refused) || results[1] != nil {
		t.Fatalf("results %v, want refused and none", results)
	}
	if seen != "" {
		t.Fatalf("the write after a rolled-back one saw description %q, want none", seen)
	}
}

func TestForgetChangedBy(t *testing.T) {
	for query, forgets := range map[string]bool{
		`SELECT id FROM agents WHERE id = $1`: false,
		`SAVEPOINT w`:                         false,
		`RELEASE w`:                           false,
		`INSERT INTO tasks (project_id, agent_id) VALUES ($1, $2)`:              false,
		`  UPDATE tasks SET agent_id = $1 WHERE id = $2`:                        false,
		`INSERT INTO agent_skills (agent_id, skill_id) VALUES ($1, $2)`:         false,
		`UPDATE agents SET last_seen_at = $1 WHERE id = $2`:                     true,
		`INSERT INTO agents (project_id, name, created_at) VALUES ($1, $2, $3)`: true,
		`UPDATE budgets SET exceeded_month = $1 WHERE project_id = $2`:          true,
		`DELETE FROM conversations WHERE id = $1`:                               true,
		`ROLLBACK TO w`:                true,
		"SELECT\n\tid FROM agents":     false,
		"UPDATE\tagents SET name = $1": true,
		`WITH x AS (UPDATE projects SET name = $1 RETURNING id) SELECT 1`:                                                                                           true,
		`INSERT INTO messages (conversation_id, content) VALUES ($1, $2)`:                                                                                           false,
		`UPDATE conversations SET name = $1 WHERE id = $2`:                                                                                                          true,
		`INSERT INTO conversation_participants (conversation_id, kind, name) VALUES ($1, $2, $3) ON CONFLICT (conversation_id, kind, name) DO NOTHING`:              false,
		`INSERT INTO conversation_participants (conversation_id, kind, name) VALUES ($1, $2, $3) ON CONFLICT (conversation_id, kind, name) DO UPDATE SET name = $4`: true,
		`UPDATE conversation_participants SET name = $1 WHERE name = $2`:                                                                                            true,
	} {
		k := &keptRows{budgets: map[string]*model.Budget{"p": nil}}
		k.forgetChangedBy(statementVerb(query), query)
		if got := k.budgets == nil; got != forgets {
			t.Errorf("%q: forgot %v, want %v", query, got, forgets)
		}
	}
}
