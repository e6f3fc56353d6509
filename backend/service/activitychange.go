package service

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/agentdesk/agentdesk/backend/model"
)

// How the activity trail says what a task change changed ("status Todo → Doing", or
// `comment "Looks good"` for the entries it added): from
// the change's event and the task's event before it, while the event log still has
// both (7 days by default). Only task.updated rows, at most changesPerPage of a page,
// and the earlier event looked for among the last changeLookBack events: a page of the
// trail stays a few hundred small reads.
const (
	changesPerPage = 100
	changeLookBack = 10_000
)

// taskFields are the parts of a task's event data a change is told in.
type taskFields struct {
	Summary        string       `json:"summary"`
	Details        string       `json:"details"`
	Status         string       `json:"status"`
	AgentName      string       `json:"agent_name"`
	WaitingDetails *string      `json:"waiting_details"`
	Steps          []model.Step `json:"steps"`
	// Appended are the conversation entries the change added (comments, answers, agent
	// messages); events stored before events stayed small carry none.
	Appended []model.TaskMessage `json:"appended"`
}

// describeChanges fills Change of the task.updated entries it can.
func (s *Service) describeChanges(ctx context.Context, projectID string, entries []model.Activity) error {
	n := 0
	for i := range entries {
		a := &entries[i]
		if a.Action != EventTaskUpdated || a.ObjectID == "" {
			continue
		}
		if n++; n > changesPerPage {
			break
		}
		cur, prev, err := s.store.Read().EventAndPrevious(ctx, projectID, a.EventSeq, "task", a.ObjectID, changeLookBack)
		if err != nil {
			return err
		}
		if cur == nil || prev == nil {
			continue
		}
		var before, after taskFields
		if json.Unmarshal(prev, &before) != nil || json.Unmarshal(cur, &after) != nil {
			continue
		}
		a.Change = taskChange(before, after)
	}
	return nil
}

// taskChange says in words what differs between two states of a task.
func taskChange(before, after taskFields) string {
	var out []string
	name := func(s string) string {
		if s == "" {
			return "nobody"
		}
		return s
	}
	short := func(s string) string {
		if r := []rune(s); len(r) > 40 {
			return string(r[:39]) + "…"
		}
		return s
	}
	if before.Status != after.Status {
		out = append(out, fmt.Sprintf("status %s → %s", before.Status, after.Status))
	}
	if before.AgentName != after.AgentName {
		out = append(out, fmt.Sprintf("agent %s → %s", name(before.AgentName), name(after.AgentName)))
	}
	if before.Summary != after.Summary {
		out = append(out, fmt.Sprintf("summary %q → %q", short(before.Summary), short(after.Summary)))
	}
	if before.Details != after.Details {
		out = append(out, "details edited")
	}
	if after.WaitingDetails != nil && (before.WaitingDetails == nil || *before.WaitingDetails != *after.WaitingDetails) {
		out = append(out, fmt.Sprintf("asked %q", short(*after.WaitingDetails)))
	}
	if len(before.Steps) != len(after.Steps) {
		out = append(out, fmt.Sprintf("steps %d → %d", len(before.Steps), len(after.Steps)))
	}
	for i := 0; i < len(before.Steps) && i < len(after.Steps); i++ {
		b, a := before.Steps[i], after.Steps[i]
		if b.Status != a.Status {
			out = append(out, fmt.Sprintf("step %d %s → %s", i+1, b.Status, a.Status))
		}
		if b.Title != a.Title {
			out = append(out, fmt.Sprintf("step %d %q → %q", i+1, short(b.Title), short(a.Title)))
		}
	}
	for _, m := range after.Appended {
		switch {
		case m.Question != "":
			out = append(out, fmt.Sprintf("answered %q", short(m.Content)))
		case m.Role == model.RoleAssistant:
			out = append(out, fmt.Sprintf("message %q", short(m.Content)))
		default:
			out = append(out, fmt.Sprintf("comment %q", short(m.Content)))
		}
	}
	return strings.Join(out, "; ")
}
