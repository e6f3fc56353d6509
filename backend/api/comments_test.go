package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestCommentOnAnyTask: POST /api/tasks/{id}/comments adds an entry to the thread of a
// task in any status, with its author, and changes nothing else; a read-only token,
// a blank comment and another project's task are refused.
func TestCommentOnAnyTask(t *testing.T) {
	f := newFixture(t)
	for _, status := range model.TaskStatuses {
		id := f.create(t, f.rw, `{"summary":"s"}`).ID
		f.put(t, fmt.Sprintf("/api/tasks/%d/status", id), `{"status":"`+status+`"}`, http.StatusOK)
		r := f.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/comments", id), Token: f.rw,
			Body: `{"content":"note on a ` + status + ` task"}`})
		if r.Status != http.StatusOK {
			t.Fatalf("%s: comment: %d %s", status, r.Status, r.Body)
		}
		var task model.Task
		r.JSON(t, &task)
		if task.Status != status {
			t.Errorf("%s: the comment moved the task to %s", status, task.Status)
		}
		last := task.Conversation[len(task.Conversation)-1]
		if last.Role != model.RoleUser || last.Content != "note on a "+status+" task" || last.Author == "" {
			t.Errorf("%s: last entry %+v, want the comment by its author with role user", status, last)
		}
	}
	// message is content's synonym, as on the conversation endpoints.
	r := f.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/comments", f.todo), Token: f.rw, Body: `{"message":"hi"}`})
	if r.Status != http.StatusOK {
		t.Fatalf("message synonym: %d %s", r.Status, r.Body)
	}
	for _, c := range []struct {
		name, token, path, body string
		status                  int
		code                    string
	}{
		{"blank", f.rw, fmt.Sprintf("/api/tasks/%d/comments", f.todo), `{"content":"  "}`, 400, "invalid_argument"},
		{"no content", f.rw, fmt.Sprintf("/api/tasks/%d/comments", f.todo), `{}`, 400, "invalid_argument"},
		{"read only", f.ro, fmt.Sprintf("/api/tasks/%d/comments", f.todo), `{"content":"x"}`, 403, "forbidden"},
		{"other project", f.rw, fmt.Sprintf("/api/tasks/%d/comments", f.other), `{"content":"x"}`, 404, "not_found"},
		{"unknown task", f.rw, "/api/tasks/99999/comments", `{"content":"x"}`, 404, "not_found"},
	} {
		r := f.env.Do(t, testenv.Request{Method: "POST", Path: c.path, Token: c.token, Body: c.body})
		if r.Status != c.status || r.ErrorCode() != c.code {
			t.Errorf("%s: %d %s, want %d %s", c.name, r.Status, r.Body, c.status, c.code)
		}
	}
}

// TestQuestionsInTheThread: every question a task asks joins its thread, attributed to
// whoever asked (the agent for a callback), before the callback's message; the same
// question twice is one entry. A failure reason is the failing callback's message.
func TestQuestionsInTheThread(t *testing.T) {
	f := newFixture(t)
	headers := f.env.AgentHeaders(t, f.project, "worker")
	callback := func(body string) model.Task {
		t.Helper()
		r := f.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/agent_callback/%d", f.todo), Header: headers,
			Body: `{"project_id":"` + f.project + `",` + body + `}`})
		if r.Status != http.StatusOK {
			t.Fatalf("callback %s: %d %s", body, r.Status, r.Body)
		}
		var task model.Task
		r.JSON(t, &task)
		return task
	}
	callback(`"waiting_details":"Which format?","message":"I need to know."`)
	callback(`"waiting_details":"Which format?"`) // the same question: no new entry
	f.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/respond", f.todo), Token: f.rw, Body: `{"response":"PDF"}`})
	task := callback(`"status":"Failed","message":"The agent failed: the printer is offline"`)
	want := []model.TaskMessage{
		{Role: model.RoleAssistant, Content: "Which format?", Author: "worker"},
		{Role: model.RoleAssistant, Content: "I need to know.", Author: "worker"},
		{Role: model.RoleUser, Content: "PDF"},
		{Role: model.RoleAssistant, Content: "The agent failed: the printer is offline", Author: "worker"},
	}
	if len(task.Conversation) != len(want) {
		t.Fatalf("thread %+v, want %d entries", task.Conversation, len(want))
	}
	for i, w := range want {
		got := task.Conversation[i]
		if got.Role != w.Role || got.Content != w.Content || (w.Author != "" && got.Author != w.Author) {
			t.Errorf("entry %d: %+v, want %+v", i, got, w)
		}
	}
	// A person who sets a question through the status is its author, as a user.
	r := f.env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/tasks/%d", f.waiting), Token: f.rw})
	var waiting model.Task
	r.JSON(t, &waiting)
	if n := len(waiting.Conversation); n != 1 || waiting.Conversation[0].Content != "which?" || waiting.Conversation[0].Role != model.RoleUser {
		t.Errorf("question set through the status: thread %+v", waiting.Conversation)
	}
}
