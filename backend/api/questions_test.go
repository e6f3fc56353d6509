package api_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestQuestionsOverREST: the question's fields through the status PUT and the agent
// callback, each error a 400 that says what is wrong, and respond by choice or data.
func TestQuestionsOverREST(t *testing.T) {
	f := newFixture(t, "sqlite")
	soon := time.Now().Add(time.Hour).UTC().Format(time.RFC3339)
	agent := f.env.AgentHeaders(t, f.project, "worker")
	schema := `{"type":"object","properties":{"name":{"type":"string","title":"Name"},"seats":{"type":"integer","minimum":1}},"required":["name"]}`
	status := fmt.Sprintf("/api/tasks/%d/status", f.waiting)
	callback := fmt.Sprintf("/api/agent_callback/%d", f.todo)
	respondWaiting := fmt.Sprintf("/api/tasks/%d/respond", f.waiting)
	respondTodo := fmt.Sprintf("/api/tasks/%d/respond", f.todo)
	steps := []struct {
		name, method, path, body string
		agent                    bool
		status                   int
		contains                 []string
	}{
		{"options", "PUT", status, `{"status":"Waiting","waiting_details":"Ship?","waiting_options":["Approve","Reject"],"waiting_ask":"dana@example.com"}`, false, 200,
			[]string{`"waiting_options":["Approve","Reject"]`, `"waiting_ask":"dana@example.com"`, `"waiting_version":2`, `"waiting_schema":null`}},
		{"camelCase too", "PUT", status, `{"status":"Waiting","waitingDetails":"Ship?","waitingOptions":["Approve","Reject"],"waitingAsk":"dana@example.com"}`, false, 200,
			[]string{`"waiting_version":2`}},
		{"a deadline", "PUT", status, `{"status":"Waiting","waiting_details":"Ship?","waiting_options":["Approve","Reject"],"waiting_expires_at":"` + soon + `","waiting_on_expiry":"default","waiting_default":"Reject"}`, false, 200,
			[]string{`"waiting_expires_at":"` + strings.TrimSuffix(soon, "Z"), `"waiting_on_expiry":"default"`, `"waiting_default":"Reject"`, `"waiting_version":3`, `"waiting_ask":null`}},
		{"not a time", "PUT", status, `{"status":"Waiting","waiting_expires_at":"tomorrow"}`, false, 400, []string{"must be RFC 3339", "tomorrow"}},
		{"options not strings", "PUT", status, `{"status":"Waiting","waiting_options":[1,2]}`, false, 400, []string{"waiting_options"}},
		{"options and schema", "PUT", status, `{"status":"Waiting","waiting_options":["a"],"waiting_schema":` + schema + `}`, false, 400, []string{"not both"}},
		{"bad schema", "PUT", status, `{"status":"Waiting","waiting_schema":{"type":"object","properties":{"seats":{"type":"integer","minimum":"one"}}}}`, false, 400,
			[]string{"waiting_schema.properties.seats.minimum must be a number"}},
		{"bad default", "PUT", status, `{"status":"Waiting","waiting_options":["a"],"waiting_expires_at":"` + soon + `","waiting_on_expiry":"default","waiting_default":"b"}`, false, 400,
			[]string{"waiting_default is not an answer"}},
		{"question with Done", "PUT", status, `{"status":"Done","waiting_options":["a"]}`, false, 400, []string{"for status Waiting"}},
		{"choice not an option", "POST", respondWaiting, `{"choice":"Maybe"}`, false, 400, []string{`choice \"Maybe\" is not one of the options: Approve, Reject`}},
		{"choice and text", "POST", respondWaiting, `{"choice":"Approve","response":"yes"}`, false, 400, []string{"one of response, choice and data"}},
		{"nothing", "POST", respondWaiting, `{}`, false, 400, []string{"response is required"}},
		{"data without a form", "POST", respondWaiting, `{"data":{"name":"x"}}`, false, 400, []string{"data answers a question with waiting_schema"}},
		{"stale choice", "POST", respondWaiting, `{"choice":"Approve","waiting_version":2}`, false, 409, []string{"waiting_version"}},
		{"choice", "POST", respondWaiting, `{"choice":"Approve","waiting_version":3}`, false, 200,
			[]string{`"status":"Doing"`, `"content":"Approve"`, `"question":"Ship?","data":null`, `"waiting_options":null`, `"waiting_expires_at":null`}},
		{"callback asks with a form", "POST", callback, `{"project_id":"` + f.project + `","waiting_details":"Who?","waiting_schema":` + schema + `}`, true, 200,
			[]string{`"status":"Waiting"`, `"waiting_schema":{"type":"object","properties":{"name"`}},
		{"callback's bad question", "POST", callback, `{"project_id":"` + f.project + `","waiting_options":[]}`, true, 400, []string{"1 to 10 options"}},
		{"data refused", "POST", respondTodo, `{"data":{"seats":0,"pets":2}}`, false, 400,
			[]string{"name is required", "pets is not a field of the form", "seats must be at least 1"}},
		{"data", "POST", respondTodo, `{"data":{"name":"Ada","seats":2}}`, false, 200,
			[]string{`"content":"Name: Ada\nseats: 2"`, `"data":{"name":"Ada","seats":2}`}},
	}
	for _, st := range steps {
		req := testenv.Request{Method: st.method, Path: st.path, Body: st.body, Token: f.rw}
		if st.agent {
			req.Token, req.Header = "", agent
		}
		r := f.env.Do(t, req)
		if r.Status != st.status {
			t.Fatalf("%s: %d %s, want %d", st.name, r.Status, r.Body, st.status)
		}
		for _, want := range st.contains {
			if !strings.Contains(string(r.Body), want) {
				t.Fatalf("%s: %s lacks %s", st.name, r.Body, want)
			}
		}
	}
	var task model.Task
	f.env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/tasks/%d", f.todo), Token: f.rw}).JSON(t, &task)
	if last := task.Conversation[len(task.Conversation)-1]; string(last.Data) != `{"name":"Ada","seats":2}` {
		t.Fatalf("the stored answer: %+v", last)
	}
}

// TestWaitingFor: whom each Waiting task waits for: the person named, the task's
// creator, else everyone who may write tasks; and whether that is the caller.
func TestWaitingFor(t *testing.T) {
	f := newFixture(t, "sqlite")
	ask := func(id int64, body string) {
		f.put(t, fmt.Sprintf("/api/tasks/%d/status", id), body, 200)
	}
	named := f.create(t, f.rw, `{"summary":"named"}`).ID
	ask(named, `{"status":"Waiting","waiting_details":"?","waiting_ask":"dana@example.com"}`)
	var got struct {
		Tasks []struct {
			ID      int64
			Asked   []string
			Anyone  bool
			AsksYou bool `json:"asks_you"`
		}
	}
	for _, c := range []struct {
		token string
		want  string
	}{
		// The fixture's task waits for anyone who may write (made by a token nobody made,
		// in a project without members with an email): the write token is asked, the
		// read-only one never.
		{f.rw, fmt.Sprintf("%d:[]:true:true %d:[dana@example.com]:false:false", f.waiting, named)},
		{f.ro, fmt.Sprintf("%d:[]:true:false %d:[dana@example.com]:false:false", f.waiting, named)},
	} {
		r := f.env.Do(t, testenv.Request{Method: "GET", Path: "/api/waiting-for", Token: c.token})
		if r.Status != 200 {
			t.Fatalf("waiting-for: %d %s", r.Status, r.Body)
		}
		r.JSON(t, &got)
		var parts []string
		for _, w := range got.Tasks {
			parts = append(parts, fmt.Sprintf("%d:%v:%v:%v", w.ID, w.Asked, w.Anyone, w.AsksYou))
		}
		if s := strings.Join(parts, " "); s != c.want {
			t.Errorf("waiting-for = %s, want %s", s, c.want)
		}
	}
}
