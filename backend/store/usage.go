package store

import (
	"context"
	"database/sql"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// InsertUsage records one usage report.
func (t *Tx) InsertUsage(ctx context.Context, u model.UsageRecord) error {
	var task any
	if u.TaskID != 0 {
		task = u.TaskID
	}
	_, err := t.exec(ctx,
		`INSERT INTO usage_records (project_id, agent_id, agent_name, task_id, model, input_tokens, output_tokens, cost_micros, day, at)
		 VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		u.ProjectID, u.AgentID, u.AgentName, task, u.Model, u.InputTokens, u.OutputTokens, u.CostMicros,
		u.At.UTC().Format(time.DateOnly), fmtTime(u.At))
	return err
}

// UsageGroup says how usage rows are summed.
type UsageGroup struct{ Day, Agent, Model bool }

// Usage sums a project's usage over the days from..to (YYYY-MM-DD, UTC, inclusive),
// grouped as asked, ordered by day, agent name, model.
func (r Reader) Usage(ctx context.Context, projectID, from, to string, g UsageGroup) ([]model.UsageRow, error) {
	cols, group := "", ""
	add := func(on bool, col string) {
		if !on {
			col = "NULL"
		} else if group == "" {
			group = " GROUP BY " + col
		} else {
			group += ", " + col
		}
		cols += col + ", "
	}
	add(g.Day, "day")
	add(g.Agent, "agent_id")
	add(g.Agent, "agent_name")
	add(g.Model, "model")
	q := `SELECT ` + cols + `COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0), COALESCE(SUM(cost_micros), 0), COUNT(*)
		FROM usage_records WHERE project_id = $1 AND day >= $2 AND day <= $3` + group
	if group != "" {
		q += " ORDER BY 1, 3, 4"
	}
	rows, err := r.query(ctx, q, projectID, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []model.UsageRow{}
	for rows.Next() {
		var u model.UsageRow
		var day, name, mdl sql.NullString
		var agent sql.NullInt64
		if err := rows.Scan(&day, &agent, &name, &mdl, &u.InputTokens, &u.OutputTokens, &u.CostMicros, &u.Reports); err != nil {
			return nil, err
		}
		u.Day, u.AgentName, u.Model = day.String, name.String, mdl.String
		if agent.Valid {
			u.AgentID = &agent.Int64
		}
		out = append(out, u)
	}
	return out, rows.Err()
}

// MonthCost is the project's cost in micro-dollars over the days from..to (YYYY-MM-DD).
func (r Reader) MonthCost(ctx context.Context, projectID, from, to string) (int64, error) {
	var n int64
	err := r.queryRow(ctx, `SELECT COALESCE(SUM(cost_micros), 0) FROM usage_records WHERE project_id = $1 AND day >= $2 AND day <= $3`,
		projectID, from, to).Scan(&n)
	return n, err
}

// Budget loads the project's budget; ErrNotFound when it has none.
func (r Reader) Budget(ctx context.Context, projectID string) (*model.Budget, error) {
	var b model.Budget
	var month sql.NullString
	err := r.queryRow(ctx, `SELECT monthly_micros, exceeded_month FROM budgets WHERE project_id = $1`, projectID).Scan(&b.MonthlyMicros, &month)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	b.ExceededMonth = month.String
	return &b, nil
}

// SetBudget sets (or, with nil, removes) the project's monthly budget. A changed
// amount forgets which month was last announced as exceeded.
func (t *Tx) SetBudget(ctx context.Context, projectID string, micros *int64, now time.Time) error {
	if micros == nil {
		_, err := t.exec(ctx, `DELETE FROM budgets WHERE project_id = $1`, projectID)
		return err
	}
	_, err := t.exec(ctx,
		`INSERT INTO budgets (project_id, monthly_micros, exceeded_month, updated_at) VALUES ($1, $2, NULL, $3)
		 ON CONFLICT (project_id) DO UPDATE SET
		   exceeded_month = CASE WHEN budgets.monthly_micros = excluded.monthly_micros THEN budgets.exceeded_month ELSE NULL END,
		   monthly_micros = excluded.monthly_micros, updated_at = excluded.updated_at`,
		projectID, *micros, fmtTime(now))
	return err
}

// MarkBudgetExceeded records that month's budget.exceeded event was sent; false when
// it already had been.
func (t *Tx) MarkBudgetExceeded(ctx context.Context, projectID, month string) (bool, error) {
	res, err := t.exec(ctx,
		`UPDATE budgets SET exceeded_month = $1 WHERE project_id = $2 AND (exceeded_month IS NULL OR exceeded_month <> $3)`,
		month, projectID, month)
	if err != nil {
		return false, err
	}
	n, _ := res.RowsAffected()
	return n > 0, nil
}
