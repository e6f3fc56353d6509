package a2a

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// A task's A2A id is its agentdesk id, in decimal; so is its contextId (agentdesk keeps
// no context of its own across tasks).
func taskIDOf(id int64) a2a.TaskID { return a2a.TaskID(strconv.FormatInt(id, 10)) }

// parseTaskID reads an A2A task id; anything but an agentdesk task id is not found.
func parseTaskID(id a2a.TaskID) (int64, error) {
	n, err := strconv.ParseInt(string(id), 10, 64)
	if err != nil || n <= 0 {
		return 0, said(fmt.Sprintf("no task %q (tasks here have numeric ids)", id), a2a.ErrTaskNotFound)
	}
	return n, nil
}

// resultArtifact is the id and name of a completed task's one artifact, its result.
const resultArtifact = "result"

// taskOf is task t as A2A shows it, with the last historyLength messages of its history
// (nil: all of them). The history is the request (summary and details) and then the
// task's conversation: the agent's entries as the agent's, every other as the user's.
func taskOf(t *model.Task, historyLength *int) *a2a.Task {
	v := service.A2AViewOf(t)
	id := taskIDOf(t.ID)
	history := make([]*a2a.Message, 0, len(t.Conversation)+1)
	request := strings.TrimSpace(t.Summary + "\n" + t.Details)
	history = append(history, message(t, "0", a2a.MessageRoleUser, request))
	for i, e := range t.Conversation {
		role := a2a.MessageRoleUser
		if e.Role == model.RoleAssistant {
			role = a2a.MessageRoleAgent
		}
		history = append(history, message(t, strconv.Itoa(i+1), role, e.Content))
	}
	if historyLength != nil {
		history = history[len(history)-min(max(*historyLength, 0), len(history)):]
	}
	task := &a2a.Task{ID: id, ContextID: string(id), Status: statusOf(t, v), History: history,
		Metadata: map[string]any{"agentdesk": map[string]any{"status": t.Status}}}
	if a := artifactOf(v); a != nil {
		task.Artifacts = []*a2a.Artifact{a}
	}
	return task
}

// message is a message of task t's history; its id is the task's id and which one it is.
func message(t *model.Task, which string, role a2a.MessageRole, text string) *a2a.Message {
	id := taskIDOf(t.ID)
	return &a2a.Message{ID: string(id) + "-" + which, TaskID: id, ContextID: string(id), Role: role,
		Parts: a2a.ContentParts{a2a.TextPart{Text: text}}}
}

// statusOf is task t's A2A status: its state, and the question or the failure as the
// agent's message.
func statusOf(t *model.Task, v service.A2AView) a2a.TaskStatus {
	at := t.UpdatedAt
	s := a2a.TaskStatus{State: v.State, Timestamp: &at}
	if v.Message != "" {
		s.Message = message(t, fmt.Sprintf("%s-%d", v.State, t.WaitingVersion), a2a.MessageRoleAgent, v.Message)
	}
	return s
}

// artifactOf is a completed task's result, as its artifact; nil without one.
func artifactOf(v service.A2AView) *a2a.Artifact {
	if v.Result == "" {
		return nil
	}
	return &a2a.Artifact{ID: resultArtifact, Name: resultArtifact, Parts: a2a.ContentParts{a2a.TextPart{Text: v.Result}}}
}

// textOf is a message's content as text: its text parts, and its data parts as JSON,
// one a line. Files are not taken.
func textOf(m *a2a.Message) (string, error) {
	if m == nil {
		return "", said("params have no message", a2a.ErrInvalidParams)
	}
	var lines []string
	for _, p := range m.Parts {
		switch p := p.(type) {
		case a2a.TextPart:
			lines = append(lines, p.Text)
		case a2a.DataPart:
			b, err := json.Marshal(p.Data)
			if err != nil {
				return "", said(fmt.Sprintf("data part: %v", err), a2a.ErrInvalidParams)
			}
			lines = append(lines, string(b))
		default:
			return "", said("file parts are not taken: send text or data parts", a2a.ErrUnsupportedContentType)
		}
	}
	return strings.Join(lines, "\n"), nil
}
