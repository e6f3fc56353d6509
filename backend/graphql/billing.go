package graphql

import (
	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Billing: usage metering (agents report it in their callbacks) and a monthly budget.

var usageRowType = gql.NewObject(gql.ObjectConfig{Name: "UsageRow", Description: "Usage summed over a group. Token counts are Float because GraphQL's Int is 32-bit; they are whole numbers.", Fields: gql.Fields{
	"day":     &gql.Field{Type: gql.String, Description: "YYYY-MM-DD (UTC) when grouped by day.", Resolve: field(func(u model.UsageRow) any { return nilIfEmpty(u.Day) })},
	"agentId": &gql.Field{Type: gql.Int, Description: "When grouped by agent.", Resolve: field(func(u model.UsageRow) any { return int64Ptr(u.AgentID) })},
	"agentName": &gql.Field{Type: gql.String, Description: "When grouped by agent: its name when it reported.", Resolve: field(func(u model.UsageRow) any {
		if u.AgentID == nil {
			return nil
		}
		return u.AgentName
	})},
	"model":        &gql.Field{Type: gql.String, Description: "When grouped by model.", Resolve: field(func(u model.UsageRow) any { return nilIfEmpty(u.Model) })},
	"inputTokens":  &gql.Field{Type: gql.NewNonNull(gql.Float), Resolve: field(func(u model.UsageRow) any { return float64(u.InputTokens) })},
	"outputTokens": &gql.Field{Type: gql.NewNonNull(gql.Float), Resolve: field(func(u model.UsageRow) any { return float64(u.OutputTokens) })},
	"costUsd":      &gql.Field{Type: gql.NewNonNull(gql.Float), Description: "US dollars.", Resolve: field(func(u model.UsageRow) any { return service.MicrosToUSD(u.CostMicros) })},
	"reports":      &gql.Field{Type: nnInt, Description: "How many usage reports were summed.", Resolve: field(func(u model.UsageRow) any { return u.Reports })},
}})

func nilIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}

var usageReportType = gql.NewObject(gql.ObjectConfig{Name: "UsageReport", Description: "A project's usage over a range of days (UTC).", Fields: gql.Fields{
	"from":    &gql.Field{Type: nnString, Resolve: field(func(r service.UsageReport) any { return r.From })},
	"to":      &gql.Field{Type: nnString, Resolve: field(func(r service.UsageReport) any { return r.To })},
	"total":   &gql.Field{Type: gql.NewNonNull(usageRowType), Resolve: field(func(r service.UsageReport) any { return r.Total })},
	"byDay":   &gql.Field{Type: listOf(usageRowType), Description: "One row per day with usage.", Resolve: field(func(r service.UsageReport) any { return r.ByDay })},
	"byAgent": &gql.Field{Type: listOf(usageRowType), Resolve: field(func(r service.UsageReport) any { return r.ByAgent })},
	"byModel": &gql.Field{Type: listOf(usageRowType), Resolve: field(func(r service.UsageReport) any { return r.ByModel })},
	"rows":    &gql.Field{Type: listOf(usageRowType), Description: "By day, agent and model together.", Resolve: field(func(r service.UsageReport) any { return r.Rows })},
}})

var budgetType = gql.NewObject(gql.ObjectConfig{Name: "Budget", Description: "The project's monthly budget and this month's spending (UTC months).", Fields: gql.Fields{
	"monthlyUsd": &gql.Field{Type: gql.Float, Description: "null: no budget.", Resolve: field(func(b service.BudgetStatus) any {
		if b.MonthlyUSD == nil {
			return nil
		}
		return *b.MonthlyUSD
	})},
	"month":    &gql.Field{Type: nnString, Description: "YYYY-MM.", Resolve: field(func(b service.BudgetStatus) any { return b.Month })},
	"spentUsd": &gql.Field{Type: gql.NewNonNull(gql.Float), Resolve: field(func(b service.BudgetStatus) any { return b.SpentUSD })},
	"exceeded": &gql.Field{Type: nnBool, Description: "The month's cost has reached the budget: agents' new tasks stay in Backlog.", Resolve: field(func(b service.BudgetStatus) any { return b.Exceeded })},
}})

func (b builder) billingQueries(f gql.Fields) {
	svc := b.svc
	f["usage"] = &gql.Field{Type: gql.NewNonNull(usageReportType), Description: "Usage reported by the project's agents, by day, agent and model (admin). Days are UTC; the range is inclusive, at most 366 days.",
		Args: gql.FieldConfigArgument{"from": {Type: nnString, Description: "First day, YYYY-MM-DD."}, "to": {Type: nnString, Description: "Last day, YYYY-MM-DD."}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Usage(p.Context, pr, argString(p.Args, "from"), argString(p.Args, "to"))
		})}
	f["budget"] = &gql.Field{Type: gql.NewNonNull(budgetType), Description: "The monthly budget and this month's spending (admin).",
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Budget(p.Context, pr)
		})}
}

func (b builder) billingMutations(f gql.Fields) {
	svc := b.svc
	f["setBudget"] = &gql.Field{Type: gql.NewNonNull(budgetType),
		Description: "Sets the project's monthly budget in US dollars, or removes it when monthlyUsd is null or left out (admin). Once the month's cost reaches it, new tasks for agents (with agentId, or made by jobs) stay in Backlog with blockedReason, and a budget.exceeded event (once a month) tells the UI.",
		Args:        gql.FieldConfigArgument{"monthlyUsd": {Type: gql.Float}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			var v *float64
			switch n := p.Args["monthlyUsd"].(type) {
			case float64:
				v = &n
			case int:
				f := float64(n)
				v = &f
			}
			return svc.SetBudget(p.Context, pr, v)
		})}
}
