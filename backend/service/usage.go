package service

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Bounds on a usage report (one agent callback) and on budgets, also stated in the
// OpenAPI document.
const (
	MaxUsageTokens    = 1_000_000_000 // per report, input and output each
	MaxUsageCostUSD   = 100_000       // per report
	MaxModelNameLen   = 128
	MaxMonthlyBudget  = 10_000_000 // USD
	MaxUsageRangeDays = 366
)

// Event types of billing.
const (
	EventBudgetUpdated  = "budget.updated"
	EventBudgetExceeded = "budget.exceeded"
)

// UsageInput is what an agent reports it used, in the callback's usage field.
type UsageInput struct {
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	CostUSD      float64 `json:"cost_usd"`
	Model        string  `json:"model"`
}

func (u *UsageInput) validate() error {
	switch {
	case u.InputTokens < 0 || u.InputTokens > MaxUsageTokens:
		return errs.Invalid("usage.input_tokens must be between 0 and %d, not %d", MaxUsageTokens, u.InputTokens)
	case u.OutputTokens < 0 || u.OutputTokens > MaxUsageTokens:
		return errs.Invalid("usage.output_tokens must be between 0 and %d, not %d", MaxUsageTokens, u.OutputTokens)
	case math.IsNaN(u.CostUSD) || u.CostUSD < 0 || u.CostUSD > MaxUsageCostUSD:
		return errs.Invalid("usage.cost_usd must be between 0 and %d, not %v", MaxUsageCostUSD, u.CostUSD)
	}
	return checkText("usage.model", u.Model, true, MaxModelNameLen)
}

func usdToMicros(v float64) int64 { return int64(math.Round(v * 1e6)) }

// MicrosToUSD turns millionths of a dollar into dollars.
func MicrosToUSD(m int64) float64 { return float64(m) / 1e6 }

// recordUsage stores an agent's usage report in the callback's transaction, then sees
// whether it spent the month's budget.
func (s *Service) recordUsage(ctx context.Context, tx *store.Tx, p *auth.Principal, taskID int64, u *UsageInput, now time.Time) error {
	if u == nil {
		return nil
	}
	err := tx.InsertUsage(ctx, model.UsageRecord{ProjectID: p.ProjectID, AgentID: p.AgentID, AgentName: p.Name, TaskID: taskID,
		Model: u.Model, InputTokens: u.InputTokens, OutputTokens: u.OutputTokens, CostMicros: usdToMicros(u.CostUSD), At: now})
	if err != nil {
		return internal("record usage", err)
	}
	b, err := projectBudget(ctx, tx, p.ProjectID)
	if err != nil {
		return err
	}
	_, err = s.budgetHold(ctx, tx, p.ProjectID, b, now)
	return err
}

// monthRange is the first and last day (YYYY-MM-DD, UTC) of now's month, and the month.
func monthRange(now time.Time) (from, to, month string) {
	month = now.UTC().Format("2006-01")
	return month + "-01", month + "-31", month
}

// projectBudget is the project's budget, nil when it has none.
func projectBudget(ctx context.Context, tx *store.Tx, projectID string) (*model.Budget, error) {
	b, err := tx.Budget(ctx, projectID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("load budget", err)
	}
	return b, nil
}

// budgetHold says why an agent's new task must wait ("" when it need not): the
// project's budget b (nil: none) for the month is spent. The first time in a month
// that it is, the budget.exceeded event tells the UI.
func (s *Service) budgetHold(ctx context.Context, tx *store.Tx, projectID string, b *model.Budget, now time.Time) (string, error) {
	if b == nil {
		return "", nil
	}
	from, to, month := monthRange(now)
	spent, err := tx.MonthCost(ctx, projectID, from, to)
	if err != nil {
		return "", internal("sum usage", err)
	}
	if spent < b.MonthlyMicros {
		return "", nil
	}
	if first, err := tx.MarkBudgetExceeded(ctx, projectID, month); err != nil {
		return "", internal("mark budget", err)
	} else if first {
		ev := map[string]any{"projectId": projectID, "month": month, "monthlyUsd": MicrosToUSD(b.MonthlyMicros), "spentUsd": MicrosToUSD(spent)}
		if err := tx.AppendEvent(ctx, projectID, EventBudgetExceeded, ev, now); err != nil {
			return "", err
		}
	}
	return fmt.Sprintf("the project's monthly budget of $%.2f is spent ($%.2f used in %s): the task stays in Backlog; raise the monthly budget or move the task to Todo by hand",
		MicrosToUSD(b.MonthlyMicros), MicrosToUSD(spent), month), nil
}

// BudgetStatus is a project's budget and this month's spending.
type BudgetStatus struct {
	MonthlyUSD *float64 // nil: no budget
	Month      string   // YYYY-MM, UTC
	SpentUSD   float64
	Exceeded   bool
}

// Budget reports the project's budget and the month's spending (admin).
func (s *Service) Budget(ctx context.Context, p *auth.Principal) (*BudgetStatus, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	return s.budgetStatus(ctx, s.store.Read(), p.ProjectID, s.clock())
}

func (s *Service) budgetStatus(ctx context.Context, r store.Reader, projectID string, now time.Time) (*BudgetStatus, error) {
	from, to, month := monthRange(now)
	spent, err := r.MonthCost(ctx, projectID, from, to)
	if err != nil {
		return nil, internal("sum usage", err)
	}
	st := &BudgetStatus{Month: month, SpentUSD: MicrosToUSD(spent)}
	b, err := r.Budget(ctx, projectID)
	if errors.Is(err, store.ErrNotFound) {
		return st, nil
	}
	if err != nil {
		return nil, internal("load budget", err)
	}
	v := MicrosToUSD(b.MonthlyMicros)
	st.MonthlyUSD, st.Exceeded = &v, spent >= b.MonthlyMicros
	return st, nil
}

// SetBudget sets the project's monthly budget in US dollars, or removes it with nil
// (admin). Once the month's cost reaches it, agents' new tasks stay in Backlog.
func (s *Service) SetBudget(ctx context.Context, p *auth.Principal, monthlyUSD *float64) (*BudgetStatus, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	var micros *int64
	if monthlyUSD != nil {
		v := *monthlyUSD
		if math.IsNaN(v) || v < 0 || v > MaxMonthlyBudget {
			return nil, errs.Invalid("the monthly budget must be between $0 and $%d, not %v (no budget at all: remove it)", MaxMonthlyBudget, v)
		}
		m := usdToMicros(v)
		micros = &m
	}
	now := s.clock()
	var st *BudgetStatus
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if err := tx.SetBudget(ctx, p.ProjectID, micros, now); err != nil {
			return internal("set budget", err)
		}
		if err := tx.AppendEvent(ctx, p.ProjectID, EventBudgetUpdated, map[string]any{"projectId": p.ProjectID, "monthlyUsd": monthlyUSD}, now); err != nil {
			return err
		}
		b, err := projectBudget(ctx, tx, p.ProjectID)
		if err != nil {
			return err
		}
		if _, err := s.budgetHold(ctx, tx, p.ProjectID, b, now); err != nil {
			return err
		}
		st, err = s.budgetStatus(ctx, tx.Reader, p.ProjectID, now)
		return err
	})
	if err != nil {
		return nil, err
	}
	return st, nil
}

// UsageReport is a project's usage over a range of days, summed several ways.
type UsageReport struct {
	From, To string // YYYY-MM-DD, UTC, inclusive
	Total    model.UsageRow
	ByDay    []model.UsageRow
	ByAgent  []model.UsageRow
	ByModel  []model.UsageRow
	Rows     []model.UsageRow // by day, agent and model
}

// Usage reports the project's usage from one day to another (YYYY-MM-DD, UTC,
// inclusive), by day, by agent, by model and all three (admin).
func (s *Service) Usage(ctx context.Context, p *auth.Principal, from, to string) (*UsageReport, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	f, err := time.Parse(time.DateOnly, from)
	if err != nil {
		return nil, errs.Invalid("from must be a date written YYYY-MM-DD, not %q", from)
	}
	t, err := time.Parse(time.DateOnly, to)
	if err != nil {
		return nil, errs.Invalid("to must be a date written YYYY-MM-DD, not %q", to)
	}
	if t.Before(f) {
		return nil, errs.Invalid("to (%s) is before from (%s)", to, from)
	}
	if days := int(t.Sub(f).Hours()/24) + 1; days > MaxUsageRangeDays {
		return nil, errs.Invalid("the range holds %d days, at most %d are allowed", days, MaxUsageRangeDays)
	}
	r := s.store.Read()
	rep := &UsageReport{From: from, To: to}
	groups := []struct {
		g   store.UsageGroup
		out *[]model.UsageRow
	}{
		{store.UsageGroup{Day: true}, &rep.ByDay},
		{store.UsageGroup{Agent: true}, &rep.ByAgent},
		{store.UsageGroup{Model: true}, &rep.ByModel},
		{store.UsageGroup{Day: true, Agent: true, Model: true}, &rep.Rows},
	}
	for _, g := range groups {
		if *g.out, err = r.Usage(ctx, p.ProjectID, from, to, g.g); err != nil {
			return nil, internal("sum usage", err)
		}
	}
	total, err := r.Usage(ctx, p.ProjectID, from, to, store.UsageGroup{})
	if err != nil {
		return nil, internal("sum usage", err)
	}
	if len(total) == 1 {
		rep.Total = total[0]
	}
	return rep, nil
}
