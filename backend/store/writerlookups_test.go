package store

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// TestWriterLookupsFollowTheTransaction: the agents and budgets the writer keeps are what
// the database holds after a change of the agent or budget, a write rolled back, and a
// commit by another connection; and a hit really comes from the cache.
func TestWriterLookupsFollowTheTransaction(t *testing.T) {
	verify := VerifyWrittenTasks
	VerifyWrittenTasks = false // the hits are checked here, one by one
	t.Cleanup(func() { VerifyWrittenTasks = verify })
	s := openTest(t)
	ctx := context.Background()
	write := func(fn func(tx *Tx) error) error { return s.Write(ctx, fn) }
	agent := &model.Agent{ProjectID: "p", Name: "worker", CreatedAt: time.Now()}
	if err := write(func(tx *Tx) error { return tx.InsertAgent(ctx, agent) }); err != nil {
		t.Fatal(err)
	}
	// load reads the agent and the budget in a write, as creating a task does.
	load := func() (a *model.Agent, budget *model.Budget) {
		t.Helper()
		if err := write(func(tx *Tx) error {
			var err error
			if a, err = tx.Agent(ctx, "p", agent.ID); err != nil {
				return err
			}
			budget, err = tx.Budget(ctx, "p")
			if errors.Is(err, ErrNotFound) {
				budget, err = nil, nil
			}
			return err
		}); err != nil {
			t.Fatal(err)
		}
		return a, budget
	}
	if a, b := load(); a.Name != "worker" || b != nil {
		t.Fatalf("first load: agent %+v, budget %+v", a, b)
	}
	if _, ok := s.written.lookups.agents[agentIDKey{"p", agent.ID}]; !ok {
		t.Fatal("the agent was not kept")
	}
	if b, ok := s.written.lookups.budgets["p"]; !ok || b.found {
		t.Fatal("the project's lack of a budget was not kept")
	}

	// Changes made through the store's writes are seen at once.
	agent.DisplayName = "The worker"
	micros := int64(5_000_000)
	if err := write(func(tx *Tx) error {
		if err := tx.UpdateAgentProfile(ctx, agent); err != nil {
			return err
		}
		if a, err := tx.Agent(ctx, "p", agent.ID); err != nil || a.DisplayName != "The worker" {
			t.Errorf("within the changing write: agent %+v, %v", a, err)
		}
		return tx.SetBudget(ctx, "p", &micros, time.Now())
	}); err != nil {
		t.Fatal(err)
	}
	if a, b := load(); a.DisplayName != "The worker" || b == nil || b.MonthlyMicros != micros {
		t.Fatalf("after a change: agent %+v, budget %+v", a, b)
	}

	// A write that fails after a change and a load leaves nothing of either behind.
	refused := errors.New("refused")
	if err := write(func(tx *Tx) error {
		if err := tx.SetBudget(ctx, "p", nil, time.Now()); err != nil {
			return err
		}
		if _, err := tx.Budget(ctx, "p"); !errors.Is(err, ErrNotFound) {
			t.Errorf("within the write that removed the budget: %v", err)
		}
		return refused
	}); !errors.Is(err, refused) {
		t.Fatalf("failing write: %v", err)
	}
	if _, b := load(); b == nil || b.MonthlyMicros != micros {
		t.Fatalf("after a rolled-back removal the budget is %+v", b)
	}

	// Another connection's commit (the command line, say) empties the cache.
	commitElsewhere(t, s, `UPDATE agents SET display_name = 'from elsewhere' WHERE id = ?`, agent.ID)
	if a, _ := load(); a.DisplayName != "from elsewhere" {
		t.Fatalf("after another connection's commit the agent is %+v", a)
	}

	// A hit comes from the cache: a change that bypasses the marks is not seen, and the
	// verification the other tests run with catches it.
	if err := write(func(tx *Tx) error {
		_, err := tx.exec(ctx, `UPDATE agents SET display_name = 'unmarked' WHERE id = ?`, agent.ID)
		return err
	}); err != nil {
		t.Fatal(err)
	}
	if a, _ := load(); a.DisplayName != "from elsewhere" {
		t.Fatalf("the load did not come from the cache: %+v", a)
	}
	VerifyWrittenTasks = true
	if err := write(func(tx *Tx) error {
		_, err := tx.Agent(ctx, "p", agent.ID)
		return err
	}); err == nil {
		t.Fatal("the verification let a stale cached agent through")
	}

	// Another project's agent of the same id is not found.
	if err := write(func(tx *Tx) error {
		if _, err := tx.Agent(ctx, "q", agent.ID); !errors.Is(err, ErrNotFound) {
			t.Errorf("another project's load: %v, want ErrNotFound", err)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
}
