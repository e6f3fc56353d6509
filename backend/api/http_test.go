package api_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// The HTTP conventions every route shares (RFC 9110; contract.md, "Round 2 decisions"):
// bodies that are not one JSON object, HEAD, 405 with Allow, gzip, Location, and the
// error envelope on the answers gin and net/http give themselves.

// TestBodyMustBeAnObject: every endpoint that takes a JSON object answers 400 to a body
// that is valid JSON but not an object, and changes nothing (a null agent body used to
// unassign the task).
func TestBodyMustBeAnObject(t *testing.T) {
	f := newFixture(t)
	data := f.env.TypedToken(t, f.project, model.TokenData, "vector:read", "vector:write")
	msg := f.env.Token(t, f.project, "messaging:read", "messaging:write")
	conv := f.env.Do(t, testenv.Request{Method: "POST", Path: "/api/projects/" + f.project + "/conversations", Token: msg, Body: `{"message":"hi"}`})
	space := f.env.Do(t, testenv.Request{Method: "POST", Path: "/api/vector/spaces", Token: data, Body: `{"name":"kb"}`})
	if conv.Status != http.StatusCreated || space.Status != http.StatusCreated {
		t.Fatalf("fixtures: %d %s / %d %s", conv.Status, conv.Body, space.Status, space.Body)
	}
	var c, s struct{ ID int64 }
	conv.JSON(t, &c)
	space.JSON(t, &s)
	agentHeaders := f.env.AgentHeaders(t, f.project, "worker")
	endpoints := []struct {
		method, path, token string
		header              http.Header
	}{
		{"POST", "/api/tasks", f.rw, nil},
		{"PUT", fmt.Sprintf("/api/tasks/%d/status", f.todo), f.rw, nil},
		{"PUT", fmt.Sprintf("/api/tasks/%d/agent", f.todo), f.rw, nil},
		{"PUT", fmt.Sprintf("/api/tasks/%d/steps/0/status", f.todo), f.rw, nil},
		{"POST", fmt.Sprintf("/api/tasks/%d/respond", f.waiting), f.rw, nil},
		{"POST", fmt.Sprintf("/api/agent_callback/%d", f.todo), "", agentHeaders},
		{"POST", "/api/projects/" + f.project + "/conversations", msg, nil},
		{"POST", fmt.Sprintf("/api/projects/%s/conversations/%d/messages", f.project, c.ID), msg, nil},
		{"POST", "/api/vector/spaces", data, nil},
		{"POST", fmt.Sprintf("/api/vector/spaces/%d/documents", s.ID), data, nil},
		{"POST", fmt.Sprintf("/api/vector/spaces/%d/search", s.ID), data, nil},
	}
	for _, e := range endpoints {
		for _, body := range []string{"null", " null ", "[]", `[{"summary":"s"}]`, `"x"`, "1", "true"} {
			r := f.env.Do(t, testenv.Request{Method: e.method, Path: e.path, Token: e.token, Header: e.header.Clone(), Body: body})
			if r.Status != http.StatusBadRequest || r.ErrorCode() != "invalid_argument" || !strings.Contains(string(r.Body), "JSON object") {
				t.Errorf("%s %s with body %s: %d %s; want 400 invalid_argument saying a JSON object is needed", e.method, e.path, body, r.Status, r.Body)
			}
		}
	}
	r := f.env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/tasks/%d", f.todo), Token: f.rw})
	var task model.Task
	r.JSON(t, &task)
	if task.AgentID == nil || *task.AgentID != f.agent.ID {
		t.Errorf("the task lost its agent after refused bodies: %s", r.Body)
	}
}
