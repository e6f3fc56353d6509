package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestCommentOnAnyTask: POST /api/tasks/{id}/comments adds an entry to the thread of a
// task in any status, with its author, and changes nothing else; a read-only token,
// a blank comment and another project's task are refused.
func TestCommentOnAnyTask(t *testing.T) { pgtest.Engines(t, testCommentOnAnyTask) }

func testCommentOnAnyTask(t *testing.T, engine string) {
	f := newFixture(t, engine)
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
		{"content and another message", f.rw, fmt.Sprintf("/api/tasks/%d/comments", f.todo), `{"content":"a","message":"b"}`, 400, "invalid_argument"},
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

// The task's conversation holds what the contract says it holds: the callbacks'
// messages (assistant), the answers (user) and comments. A question stays in
// waiting_details, and an answer keeps the question it answered (`question`), which is
// how the UI shows every question in the thread; writing questions into the
// conversation as entries would change what agents written against the contract read.
func TestQuestionsStayOutOfTheConversation(t *testing.T) {
	pgtest.Engines(t, testQuestionsStayOutOfTheConversation)
}

func testQuestionsStayOutOfTheConversation(t *testing.T, engine string) {
	f := newFixture(t, engine)
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
	if task := callback(`"waiting_details":"Which format?","message":"I need to know."`); task.WaitingDetails == nil || *task.WaitingDetails != "Which format?" {
		t.Fatalf("the question is not in waiting_details: %+v", task)
	}
	f.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/respond", f.todo), Token: f.rw, Body: `{"response":"PDF"}`})
	task := callback(`"status":"Failed","message":"The agent failed: the printer is offline"`)
	want := []model.TaskMessage{
		{Role: model.RoleAssistant, Content: "I need to know.", Author: "worker"},
		{Role: model.RoleUser, Content: "PDF", Question: "Which format?"},
		{Role: model.RoleAssistant, Content: "The agent failed: the printer is offline", Author: "worker"},
	}
	if len(task.Conversation) != len(want) {
		t.Fatalf("thread %+v, want %d entries", task.Conversation, len(want))
	}
	for i, w := range want {
		got := task.Conversation[i]
		if got.Role != w.Role || got.Content != w.Content || got.Question != w.Question || (w.Author != "" && got.Author != w.Author) {
			t.Errorf("entry %d: %+v, want %+v", i, got, w)
		}
	}
}
