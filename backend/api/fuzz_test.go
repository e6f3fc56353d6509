package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/agentdesk/agentdesk/backend/api"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// The seed corpora run in every `go test`; `go test -fuzz FuzzCreateTask ./backend/api`
// explores further.

func FuzzCreateTask(f *testing.F) {
	for _, seed := range []string{
		`{"summary":"s"}`,
		`{"summary":"s","details":"d","steps":[{"title":"a"},{"title":"b?"}],"agent_id":1}`,
		`{"summary":"s","agent_id":null,"steps":null}`,
		`{"summary":"s","taskType":"review","conversation_id":"abc"}`,
		`{"summary":"s","conversation_id":12}`,
		`{"summary":""}`, `{"summary":5}`, `{"summary":"s","steps":[{}]}`, `{"summary":"s","steps":"x"}`,
		`{"summary":"s","agent_id":-1}`, `{"summary":"s","agent_id":1e400}`, `{"summary":"s","agent_id":9223372036854775808}`,
		`{"summary":"\u0000\ud800"}`, `{"summary":"s"} trailing`, `[]`, `null`, `""`, `{`, ``, `{"summary":"s","extra":{"deep":[1,2,3]}}`,
	} {
		f.Add([]byte(seed))
	}
	env := testenv.Start(f)
	token := env.Token(f, env.Project.ID, "task:read", "task:write")
	env.Agent(f, env.Project.ID, "worker")

	f.Fuzz(func(t *testing.T, body []byte) {
		in, decodeErr := api.DecodeCreateTask(body)
		if decodeErr != nil && errs.CodeOf(decodeErr) != errs.InvalidArgument {
			t.Fatalf("decode error with code %s: %v", errs.CodeOf(decodeErr), decodeErr)
		}
		r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: token, Body: body})
		switch {
		case r.Status >= 500:
			t.Fatalf("server error %d for %q: %s", r.Status, body, r.Body)
		case decodeErr != nil && r.Status != http.StatusBadRequest:
			t.Fatalf("undecodable body %q answered %d", body, r.Status)
		case r.Status == http.StatusCreated:
			var task model.Task
			if err := json.Unmarshal(r.Body, &task); err != nil {
				t.Fatalf("201 body is not a task: %s", r.Body)
			}
			if task.Summary != in.Summary || len(task.Steps) != len(in.Steps) {
				t.Fatalf("created %+v from %+v", task, in)
			}
		case r.Status != http.StatusBadRequest:
			t.Fatalf("unexpected status %d for %q: %s", r.Status, body, r.Body)
		}
	})
}

func FuzzStatus(f *testing.F) {
	for _, seed := range []string{
		`{"status":"Doing"}`, `{"status":"Waiting","waiting_details":"q?"}`, `{"status":"Waiting","waitingDetails":"q?"}`,
		`{"status":"done"}`, `{"status":""}`, `{"status":null}`, `{"status":1}`, `{}`, `[]`, `"Doing"`, `{"status":"Done"}{}`,
		`{"status":"Waiting","waiting_details":5}`, `{"status":"completed"}`, `{"status":"in_progress"}`,
	} {
		f.Add([]byte(seed), uint8(0))
	}
	env := testenv.Start(f)
	token := env.Token(f, env.Project.ID, "task:read", "task:write")
	r := env.Do(f, testenv.Request{Method: "POST", Path: "/api/tasks", Token: token,
		Body: `{"summary":"s","steps":[{"title":"a"},{"title":"b"}]}`})
	var task model.Task
	r.JSON(f, &task)

	f.Fuzz(func(t *testing.T, body []byte, step uint8) {
		in, decodeErr := api.DecodeStatus(body)
		if decodeErr != nil && errs.CodeOf(decodeErr) != errs.InvalidArgument {
			t.Fatalf("decode error with code %s: %v", errs.CodeOf(decodeErr), decodeErr)
		}
		for _, route := range []struct {
			path       string
			taskStatus bool
		}{
			{fmt.Sprintf("/api/tasks/%d/status", task.ID), true},
			{fmt.Sprintf("/api/tasks/%d/steps/%d/status", task.ID, step%4), false},
		} {
			path := route.path
			r := env.Do(t, testenv.Request{Method: "PUT", Path: path, Token: token, Body: body})
			switch {
			case r.Status >= 500:
				t.Fatalf("server error %d for %q: %s", r.Status, body, r.Body)
			case decodeErr != nil && r.Status != http.StatusBadRequest:
				t.Fatalf("undecodable body %q answered %d", body, r.Status)
			case r.Status == http.StatusOK && decodeErr == nil:
				var got model.Task
				if err := json.Unmarshal(r.Body, &got); err != nil {
					t.Fatalf("200 body is not a task: %s", r.Body)
				}
				if route.taskStatus && got.Status != *in.Status {
					t.Fatalf("status %q set, task has %q", *in.Status, got.Status)
				}
			case r.Status != http.StatusOK && r.Status != http.StatusBadRequest && r.Status != http.StatusNotFound:
				t.Fatalf("unexpected status %d for %q: %s", r.Status, body, r.Body)
			}
		}
	})
}
