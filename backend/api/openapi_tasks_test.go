package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/api"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

func oaScenarios() []oaCase {
	huge := strings.Repeat("x", api.MaxJSONBody+1)
	createKey := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		first := r.task(t)
		again := h.call(t, oaCase{method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"once", "details":"d"}`,
			header: map[string]string{"Idempotency-Key": "oa-create-1"}, status: 201}, ids)
		if again.task(t).ID != first.ID {
			t.Errorf("replay with the same Idempotency-Key made task %d, the first was %d", again.task(t).ID, first.ID)
		}
		h.call(t, oaCase{method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"another"}`,
			header: map[string]string{"Idempotency-Key": "oa-create-1"}, status: 409, code: "conflict"}, ids)
	}
	respondKey := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		path := fmt.Sprintf("/api/tasks/%d/respond", ids["waiting"])
		again := h.call(t, oaCase{method: "POST", path: path, auth: "wo", body: `{"response":"blue"}`,
			header: map[string]string{"Idempotency-Key": "oa-respond-1"}, status: 200}, ids)
		if !bytes.Equal(again.body, r.body) {
			t.Errorf("replay answered %s, the first answer was %s", again.body, r.body)
		}
		h.call(t, oaCase{method: "POST", path: path, auth: "wo", body: `{"response":"red"}`,
			header: map[string]string{"Idempotency-Key": "oa-respond-1"}, status: 409, code: "conflict"}, ids)
	}
	commentKey := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		path := fmt.Sprintf("/api/tasks/%d/comments", ids["task"])
		again := h.call(t, oaCase{method: "POST", path: path, auth: "wo", body: `{"content":"once"}`,
			header: map[string]string{"Idempotency-Key": "oa-comment-1"}, status: 200}, ids)
		if !bytes.Equal(again.body, r.body) {
			t.Errorf("replay answered %s, the first answer was %s", again.body, r.body)
		}
		h.call(t, oaCase{method: "POST", path: path, auth: "wo", body: `{"content":"twice"}`,
			header: map[string]string{"Idempotency-Key": "oa-comment-1"}, status: 409, code: "conflict"}, ids)
	}
	taskIs := func(want func(model.Task) error) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
			if err := want(r.task(t)); err != nil {
				t.Errorf("%v: %s", err, r.body)
			}
		}
	}
	return []oaCase{
		// Service.
		{name: "health", method: "GET", path: "/healthz", auth: "none", status: 200},
		{name: "openapi document", method: "GET", path: "/api/openapi.json", auth: "none", status: 200},

		// GET /api/tasks
		{name: "list", method: "GET", path: "/api/tasks", auth: "ro", status: 200, check: oaNoConversationInLists},
		{name: "list by status", method: "GET", path: "/api/tasks?status=Waiting", auth: "rw", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				for _, item := range r.list(t) {
					if item["status"] != "Waiting" {
						t.Errorf("status filter let %v through", item["status"])
					}
				}
			}},
		{name: "list by agent", method: "GET", path: "/api/tasks?agent_id={agent}", auth: "ro", status: 200},
		{name: "list pages with Link", method: "GET", path: "/api/tasks?limit=1", auth: "ro", status: 200, check: oaPages("ro", "/api/tasks")},
		{name: "list after_id", method: "GET", path: "/api/tasks?after_id=0&limit=1000", auth: "ro", status: 200},
		{name: "list bad status", method: "GET", path: "/api/tasks?status=doing", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list empty status", method: "GET", path: "/api/tasks?status=", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list limit 0", method: "GET", path: "/api/tasks?limit=0", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list limit 1001", method: "GET", path: "/api/tasks?limit=1001", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list limit not a number", method: "GET", path: "/api/tasks?limit=ten", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list newest first", method: "GET", path: "/api/tasks?order=desc&limit=2", auth: "ro", status: 200, check: oaNewestFirst},
		{name: "list bad order", method: "GET", path: "/api/tasks?order=up", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "counts", method: "GET", path: "/api/tasks/counts", auth: "ro", status: 200},
		{name: "waiting for", method: "GET", path: "/api/waiting-for", auth: "ro", status: 200},
		{name: "waiting for no credentials", method: "GET", path: "/api/waiting-for", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "waiting for without task:read", method: "GET", path: "/api/waiting-for", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "counts of an agent", method: "GET", path: "/api/tasks/counts?agent_id={agent}", auth: "ro", status: 200},
		{name: "counts of a search", method: "GET", path: "/api/tasks/counts?q=task", auth: "ro", status: 200},
		{name: "counts bad search", method: "GET", path: "/api/tasks/counts?q=%21%21", auth: "ro", status: 400, code: "invalid_argument"},
		{name: "list search", method: "GET", path: "/api/tasks?q=task&status=Todo&order=desc&limit=5", auth: "ro", status: 200},
		{name: "list empty search", method: "GET", path: "/api/tasks?q=", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list search without a word", method: "GET", path: "/api/tasks?q=%2A%22", auth: "ro", status: 400, code: "invalid_argument"},
		{name: "project counts bad search", method: "GET", path: "/api/projects/{project}/tasks/counts?q=", auth: "agent", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "counts no credentials", method: "GET", path: "/api/tasks/counts", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "counts without task:read", method: "GET", path: "/api/tasks/counts", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "project counts", method: "GET", path: "/api/projects/{project}/tasks/counts", auth: "agent", status: 200},
		{name: "project counts no credentials", method: "GET", path: "/api/projects/{project}/tasks/counts", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project counts without task:read", method: "GET", path: "/api/projects/{project}/tasks/counts", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "project counts another project", method: "GET", path: "/api/projects/{otherProject}/tasks/counts", auth: "ro", status: 404, code: "not_found"},
		{name: "list negative after_id", method: "GET", path: "/api/tasks?after_id=-1", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list fractional agent_id", method: "GET", path: "/api/tasks?agent_id=1.5", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "list no credentials", method: "GET", path: "/api/tasks", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "list unknown token", method: "GET", path: "/api/tasks", auth: "raw:Bearer adk_0000000000000000000000000000000000000000", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "list Bearer omitted", method: "GET", path: "/api/tasks", auth: "raw:" + "adk_0000000000000000000000000000000000000000", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "list without task:read", method: "GET", path: "/api/tasks", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "list messaging token", method: "GET", path: "/api/tasks", auth: "msg", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "list data token", method: "GET", path: "/api/tasks", auth: "data", req: oaInvalid, status: 403, code: "forbidden"},

		// POST /api/tasks
		{name: "create is Backlog without agent", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","details":"d","steps":[{"title":"one"}]}`, status: 201,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Backlog" || v.AgentID != nil || v.AgentName != "" || v.Conversation == nil || len(v.Steps) != 1 ||
					v.Steps[0].Status != "pending" || v.Source != "user" || v.TaskType != "standard" || v.CurrentStepNum != 0 {
					return errors.New("not a new Backlog task")
				}
				return nil
			})},
		{name: "create is Todo with agent", method: "POST", path: "/api/tasks", auth: "rw", body: `{"summary":"s","agent_id":{agent},"taskType":"review"}`, status: 201,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Todo" || v.AgentID == nil || v.AgentName != oaAgentName || v.TaskType != "review" {
					return errors.New("not a new Todo task of the agent")
				}
				return nil
			})},
		{name: "create ignores unknown fields", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","colour":"blue","steps":[{"title":"x","extra":1}]}`, status: 201},
		{name: "create idempotent", method: "POST", path: "/api/tasks", auth: "wo", body: `{"details":"d","summary":"once"}`,
			header: map[string]string{"Idempotency-Key": "oa-create-1"}, status: 201, check: createKey},
		{name: "create malformed JSON", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create not an object", method: "POST", path: "/api/tasks", auth: "wo", body: `[1,2]`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create without body", method: "POST", path: "/api/tasks", auth: "wo", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create missing summary", method: "POST", path: "/api/tasks", auth: "wo", body: `{"details":"d"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create blank summary", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"   "}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create summary too long", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"` + strings.Repeat("s", service.MaxSummaryLen+1) + `"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create summary wrong type", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":5}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create step without title", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","steps":[{}]}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create agent of another project", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","agent_id":{otherAgent}}`, status: 400, code: "invalid_argument"},
		{name: "create unknown conversation", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s","conversation_id":999999}`, status: 400, code: "invalid_argument"},
		{name: "create bad Idempotency-Key", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"s"}`, header: map[string]string{"Idempotency-Key": "has space"}, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "create no credentials", method: "POST", path: "/api/tasks", auth: "none", body: `{"summary":"s"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "create read-only token", method: "POST", path: "/api/tasks", auth: "ro", body: `{"summary":"s"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "create body over 1 MiB", method: "POST", path: "/api/tasks", auth: "wo", body: `{"summary":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// DELETE /api/tasks/done
		{name: "delete done", method: "DELETE", path: "/api/tasks/done", auth: "wo", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				if n, _ := r.object(t)["deleted"].(float64); n < 1 {
					t.Errorf("deleted %v, want at least 1", r.object(t)["deleted"])
				}
				h.call(t, oaCase{method: "GET", path: "/api/tasks?status=Done", auth: "ro", status: 200,
					check: func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
						if len(r.list(t)) != 0 {
							t.Errorf("Done tasks remain: %s", r.body)
						}
					}}, ids)
				h.call(t, oaCase{method: "GET", path: "/api/tasks/{other}", auth: "other", status: 200}, ids)
			}},
		{name: "delete done no credentials", method: "DELETE", path: "/api/tasks/done", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "delete done read-only", method: "DELETE", path: "/api/tasks/done", auth: "ro", req: oaInvalid, status: 403, code: "forbidden"},

		// GET /api/tasks/{id}
		{name: "get", method: "GET", path: "/api/tasks/{task}", auth: "ro", status: 200, check: oaHasConversation},
		{name: "get waiting", method: "GET", path: "/api/tasks/{waiting}", auth: "rw", status: 200,
			check: taskIs(func(v model.Task) error {
				if !v.IsWaiting || v.WaitingDetails == nil || *v.WaitingDetails != "which one?" || v.WaitingVersion != 1 {
					return errors.New("not the waiting task")
				}
				return nil
			})},
		{name: "get id not an integer", method: "GET", path: "/api/tasks/abc", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "get id 0", method: "GET", path: "/api/tasks/0", auth: "ro", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "get no credentials", method: "GET", path: "/api/tasks/{task}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "get without task:read", method: "GET", path: "/api/tasks/{task}", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "get unknown task", method: "GET", path: "/api/tasks/999999", auth: "ro", status: 404, code: "not_found"},
		{name: "get task of another project", method: "GET", path: "/api/tasks/{other}", auth: "ro", status: 404, code: "not_found"},
		{name: "get not modified", method: "GET", path: "/api/tasks/{task}", auth: "ro", header: map[string]string{"If-None-Match": "{taskETag}"}, status: 304,
			check: oaETagIs("task")},
		{name: "get changed since", method: "GET", path: "/api/tasks/{task}", auth: "ro", header: map[string]string{"If-None-Match": `"stale"`}, status: 200,
			check: oaETagIs("task")},

		// DELETE /api/tasks/{id}
		{name: "delete", method: "DELETE", path: "/api/tasks/{task}", auth: "wo", status: 204,
			check: func(t *testing.T, h *oaHarness, _ *oaResult, ids map[string]int64) {
				h.call(t, oaCase{method: "GET", path: "/api/tasks/{task}", auth: "ro", status: 404, code: "not_found"}, ids)
			}},
		{name: "delete If-Match stale", method: "DELETE", path: "/api/tasks/{task}", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, status: 412, code: "precondition_failed"},
		{name: "delete If-Match current", method: "DELETE", path: "/api/tasks/{task}", auth: "wo", header: map[string]string{"If-Match": "{taskETag}"}, status: 204},
		{name: "delete id not an integer", method: "DELETE", path: "/api/tasks/abc", auth: "wo", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "delete no credentials", method: "DELETE", path: "/api/tasks/{task}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "delete read-only", method: "DELETE", path: "/api/tasks/{task}", auth: "ro", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "delete unknown task", method: "DELETE", path: "/api/tasks/999999", auth: "wo", status: 404, code: "not_found"},
		{name: "delete task of another project", method: "DELETE", path: "/api/tasks/{other}", auth: "wo", status: 404, code: "not_found"},

		// PUT /api/tasks/{id}/status
		{name: "status Doing", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{"status":"Doing"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Doing" || !v.IsActive || v.IsWaiting {
					return errors.New("not Doing")
				}
				return nil
			})},
		{name: "status Waiting", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{"status":"Waiting","waitingDetails":"ok?"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if !v.IsWaiting || v.WaitingDetails == nil || *v.WaitingDetails != "ok?" || v.WaitingVersion != 1 {
					return errors.New("not Waiting with details and version 1")
				}
				return nil
			})},
		{name: "status leaving Waiting", method: "PUT", path: "/api/tasks/{waiting}/status", auth: "wo", body: `{"status":"Backlog"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Backlog" || v.WaitingDetails != nil || v.IsWaiting {
					return errors.New("waiting details not cleared")
				}
				return nil
			})},
		{name: "status If-Match stale", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"status":"Done"}`, status: 412, code: "precondition_failed"},
		{name: "status If-Match current", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", header: map[string]string{"If-Match": "{taskETag}"}, body: `{"status":"Done"}`, status: 200,
			check: oaETagIs("task")},
		{name: "status bad enum", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{"status":"done"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "status missing", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "status malformed JSON", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `status=Done`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "status no credentials", method: "PUT", path: "/api/tasks/{task}/status", auth: "none", body: `{"status":"Done"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "status read-only", method: "PUT", path: "/api/tasks/{task}/status", auth: "ro", body: `{"status":"Done"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "status unknown task", method: "PUT", path: "/api/tasks/999999/status", auth: "wo", body: `{"status":"Done"}`, status: 404, code: "not_found"},
		{name: "status task of another project", method: "PUT", path: "/api/tasks/{other}/status", auth: "wo", body: `{"status":"Done"}`, status: 404, code: "not_found"},
		{name: "status body over 1 MiB", method: "PUT", path: "/api/tasks/{task}/status", auth: "wo", body: `{"status":"Done","x":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// PUT /api/tasks/{id}/agent
		{name: "assign", method: "PUT", path: "/api/tasks/{waiting}/agent", auth: "wo", body: `{"agent_id":{agent}}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.AgentName != oaAgentName || v.Status != "Waiting" {
					return errors.New("not assigned, or the status changed")
				}
				return nil
			})},
		{name: "unassign with null", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", body: `{"agent_id":null}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.AgentID != nil || v.AgentName != "" || v.Status != "Todo" {
					return errors.New("not unassigned, or the status changed")
				}
				return nil
			})},
		{name: "unassign with empty body", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", status: 200},
		{name: "assign agent of another project", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", body: `{"agent_id":{otherAgent}}`, status: 400, code: "invalid_argument"},
		{name: "assign If-Match stale", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"agent_id":null}`, status: 412, code: "precondition_failed"},
		{name: "assign wrong type", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", body: `{"agent_id":"worker"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "assign no credentials", method: "PUT", path: "/api/tasks/{task}/agent", auth: "none", body: `{"agent_id":null}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "assign read-only", method: "PUT", path: "/api/tasks/{task}/agent", auth: "ro", body: `{"agent_id":null}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "assign task of another project", method: "PUT", path: "/api/tasks/{other}/agent", auth: "wo", body: `{"agent_id":null}`, status: 404, code: "not_found"},
		{name: "assign body over 1 MiB", method: "PUT", path: "/api/tasks/{task}/agent", auth: "wo", body: `{"agent_id":null,"x":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// PATCH /api/tasks/{id}
		{name: "edit summary and details", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", body: `{"summary":"new summary","details":"**new** details"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Summary != "new summary" || v.Details != "**new** details" || len(v.Steps) != 3 || v.Status != "Todo" || v.AgentName != oaAgentName {
					return errors.New("not edited, or something else changed")
				}
				return nil
			})},
		{name: "edit steps keeps statuses, adds pending ones", method: "PATCH", path: "/api/tasks/{done}", auth: "wo",
			body: `{"steps":[{"title":"ONE"},{"title":"TWO"},{"title":"THREE"},{"title":"four"}]}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if len(v.Steps) != 4 || v.Steps[0].Title != "ONE" || v.Steps[3].Title != "four" || v.Steps[3].Status != "pending" ||
					v.Summary != "oa done" || v.Status != "Done" || v.Steps[3].ID != v.Steps[0].ID+3 {
					return errors.New("steps not edited as documented")
				}
				return nil
			})},
		{name: "edit fewer steps removes the last", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", body: `{"steps":[{"title":"only"}]}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if len(v.Steps) != 1 || v.Steps[0].Title != "only" {
					return errors.New("steps not cut to one")
				}
				return nil
			})},
		{name: "edit If-Match current", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", header: map[string]string{"If-Match": "{taskETag}"}, body: `{"summary":"matched"}`, status: 200},
		{name: "edit If-Match stale", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"summary":"x"}`, status: 412, code: "precondition_failed"},
		{name: "edit nothing", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "edit blank summary", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", body: `{"summary":"  "}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "edit empty step title", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", body: `{"steps":[{"title":""}]}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "edit wrong type", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", body: `{"summary":5}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "edit no body", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "edit no credentials", method: "PATCH", path: "/api/tasks/{task}", auth: "none", body: `{"summary":"x"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "edit read-only", method: "PATCH", path: "/api/tasks/{task}", auth: "ro", body: `{"summary":"x"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "edit unknown task", method: "PATCH", path: "/api/tasks/999999", auth: "wo", body: `{"summary":"x"}`, status: 404, code: "not_found"},
		{name: "edit task of another project", method: "PATCH", path: "/api/tasks/{other}", auth: "wo", body: `{"summary":"x"}`, status: 404, code: "not_found"},
		{name: "edit body over 1 MiB", method: "PATCH", path: "/api/tasks/{task}", auth: "wo", body: `{"summary":"x","x":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// PUT /api/tasks/{id}/steps/{stepNum}/status
		{name: "step completed", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{"status":"completed"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Steps[0].Status != "completed" || v.CurrentStepNum != 1 {
					return errors.New("step 0 not completed, or current_step_num not 1")
				}
				return nil
			})},
		{name: "step synonym Doing", method: "PUT", path: "/api/tasks/{task}/steps/1/status", auth: "wo", body: `{"status":"Doing"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Steps[1].Status != "in_progress" {
					return errors.New("Doing is not stored as in_progress")
				}
				return nil
			})},
		{name: "step synonym Done", method: "PUT", path: "/api/tasks/{task}/steps/2/status", auth: "wo", body: `{"status":"Done"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Steps[2].Status != "completed" {
					return errors.New("Done is not stored as completed")
				}
				return nil
			})},
		{name: "step synonym Todo", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{"status":"Todo"}`, status: 200},
		{name: "step skipped", method: "PUT", path: "/api/tasks/{task}/steps/2/status", auth: "wo", body: `{"status":"skipped"}`, status: 200},
		{name: "step If-Match stale", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"status":"completed"}`, status: 412, code: "precondition_failed"},
		{name: "step bad enum", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{"status":"finished"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "step missing status", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "step negative", method: "PUT", path: "/api/tasks/{task}/steps/-1/status", auth: "wo", body: `{"status":"completed"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "step not a number", method: "PUT", path: "/api/tasks/{task}/steps/first/status", auth: "wo", body: `{"status":"completed"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "step no credentials", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "none", body: `{"status":"completed"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "step read-only", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "ro", body: `{"status":"completed"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "step out of range", method: "PUT", path: "/api/tasks/{task}/steps/3/status", auth: "wo", body: `{"status":"completed"}`, status: 404, code: "not_found"},
		{name: "step unknown task", method: "PUT", path: "/api/tasks/999999/steps/0/status", auth: "wo", body: `{"status":"completed"}`, status: 404, code: "not_found"},
		{name: "step body over 1 MiB", method: "PUT", path: "/api/tasks/{task}/steps/0/status", auth: "wo", body: `{"status":"completed","x":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// POST /api/tasks/{id}/respond
		{name: "respond", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"the blue one"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				n := len(v.Conversation)
				if v.Status != "Doing" || v.WaitingDetails != nil || n == 0 || v.Conversation[n-1].Role != "user" || v.Conversation[n-1].Content != "the blue one" {
					return errors.New("the response did not join the conversation, or the task is not Doing")
				}
				return nil
			})},
		{name: "respond current waiting_version", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"x","waiting_version":1}`, status: 200},
		{name: "respond idempotent", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"blue"}`,
			header: map[string]string{"Idempotency-Key": "oa-respond-1"}, status: 200, check: respondKey},
		{name: "respond stale waiting_version", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"x","waiting_version":0}`, status: 409, code: "conflict"},
		{name: "respond If-Match stale", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"response":"x"}`, status: 412, code: "precondition_failed"},
		{name: "respond If-Match current", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", header: map[string]string{"If-Match": "{waitingETag}"}, body: `{"response":"x"}`, status: 200},
		{name: "respond not Waiting", method: "POST", path: "/api/tasks/{task}/respond", auth: "wo", body: `{"response":"x"}`, status: 409, code: "conflict"},
		{name: "respond empty", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":""}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "respond missing", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "respond twice over", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"x","choice":"y"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "respond choice without options", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"choice":"y"}`, status: 400, code: "invalid_argument"},
		{name: "status with a bad question", method: "PUT", path: "/api/tasks/{waiting}/status", auth: "wo", body: `{"status":"Waiting","waiting_options":["a"],"waiting_schema":{"type":"object","properties":{"a":{"type":"string"}}}}`, status: 400, code: "invalid_argument"},
		{name: "respond version wrong type", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"x","waiting_version":"1"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "respond no credentials", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "none", body: `{"response":"x"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "respond read-only", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "ro", body: `{"response":"x"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "respond unknown task", method: "POST", path: "/api/tasks/999999/respond", auth: "wo", body: `{"response":"x"}`, status: 404, code: "not_found"},
		{name: "respond task of another project", method: "POST", path: "/api/tasks/{other}/respond", auth: "wo", body: `{"response":"x"}`, status: 404, code: "not_found"},
		{name: "respond body over 1 MiB", method: "POST", path: "/api/tasks/{waiting}/respond", auth: "wo", body: `{"response":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// POST /api/tasks/{id}/comments
		{name: "comment", method: "POST", path: "/api/tasks/{task}/comments", auth: "wo", body: `{"content":"see the spec"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				n := len(v.Conversation)
				if n == 0 || v.Conversation[n-1].Role != "user" || v.Conversation[n-1].Content != "see the spec" || v.Conversation[n-1].Author == "" {
					return errors.New("the comment did not join the conversation with its author")
				}
				return nil
			})},
		{name: "comment message synonym", method: "POST", path: "/api/tasks/{task}/comments", auth: "wo", body: `{"message":"also this"}`, status: 200},
		{name: "comment idempotent", method: "POST", path: "/api/tasks/{task}/comments", auth: "wo", body: `{"content":"once"}`,
			header: map[string]string{"Idempotency-Key": "oa-comment-1"}, status: 200, check: commentKey},
		{name: "comment If-Match stale", method: "POST", path: "/api/tasks/{task}/comments", auth: "wo", header: map[string]string{"If-Match": `"stale"`}, body: `{"content":"x"}`, status: 412, code: "precondition_failed"},
		{name: "comment blank", method: "POST", path: "/api/tasks/{task}/comments", auth: "wo", body: `{"content":" "}`, req: oaUnchecked, status: 400, code: "invalid_argument"},
		{name: "comment missing", method: "POST", path: "/api/tasks/{task}/comments", auth: "wo", body: `{}`, req: oaUnchecked, status: 400, code: "invalid_argument"},
		{name: "comment no credentials", method: "POST", path: "/api/tasks/{task}/comments", auth: "none", body: `{"content":"x"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "comment read-only", method: "POST", path: "/api/tasks/{task}/comments", auth: "ro", body: `{"content":"x"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "comment unknown task", method: "POST", path: "/api/tasks/999999/comments", auth: "wo", body: `{"content":"x"}`, status: 404, code: "not_found"},
		{name: "comment body over 1 MiB", method: "POST", path: "/api/tasks/{task}/comments", auth: "wo", body: `{"content":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// POST /api/agent_callback/{id}
		{name: "callback report", method: "POST", path: "/api/agent_callback/{task}", auth: "agent",
			body: `{"project_id":"{project}","steps":[{"index":0,"status":"completed"},{"index":1,"status":"Doing"}],"status":"Doing","message":"working on it"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				n := len(v.Conversation)
				if v.Status != "Doing" || v.Steps[0].Status != "completed" || v.Steps[1].Status != "in_progress" || v.CurrentStepNum != 1 ||
					n == 0 || v.Conversation[n-1].Role != "assistant" || v.Conversation[n-1].Content != "working on it" {
					return errors.New("the report was not applied")
				}
				return nil
			})},
		{name: "callback waiting_details alone", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","waitingDetails":"need input"}`, status: 200,
			check: taskIs(func(v model.Task) error {
				if v.Status != "Waiting" || v.WaitingDetails == nil || *v.WaitingDetails != "need input" || v.WaitingVersion != 1 {
					return errors.New("waiting_details without status did not make the task Waiting")
				}
				return nil
			})},
		{name: "callback idempotent", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","message":"once"}`,
			header: map[string]string{"Idempotency-Key": "oa-callback-1"}, status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				again := h.call(t, oaCase{method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","message":"once"}`,
					header: map[string]string{"Idempotency-Key": "oa-callback-1"}, status: 200}, ids)
				if n := len(again.task(t).Conversation); n != 1 || !bytes.Equal(again.body, r.body) {
					t.Errorf("the replay answered %s (%d messages), the first answer was %s", again.body, n, r.body)
				}
				h.call(t, oaCase{method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","message":"twice"}`,
					header: map[string]string{"Idempotency-Key": "oa-callback-1"}, status: 409, code: "conflict"}, ids)
			}},
		{name: "callback If-Match stale", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", header: map[string]string{"If-Match": `"stale"`}, body: `{"project_id":"{project}","status":"Doing"}`, status: 412, code: "precondition_failed"},
		{name: "callback malformed JSON", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "callback bad status", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","status":"Finished"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "callback bad step status", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","steps":[{"index":0,"status":"finished"}]}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "callback step past the last", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","steps":[{"index":3,"status":"completed"}]}`, status: 400, code: "invalid_argument"},
		{name: "callback without project_id", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"status":"Done"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "callback no credentials", method: "POST", path: "/api/agent_callback/{task}", auth: "none", body: `{"project_id":"{project}"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "callback wrong digest", method: "POST", path: "/api/agent_callback/{task}", auth: "agent-bad-digest", body: `{"project_id":"{project}"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "callback unknown agent", method: "POST", path: "/api/agent_callback/{task}", auth: "agent-unknown", body: `{"project_id":"{project}"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "callback with a Bearer token", method: "POST", path: "/api/agent_callback/{task}", auth: "rw", body: `{"project_id":"{project}"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "callback on a task not assigned to the agent", method: "POST", path: "/api/agent_callback/{unassigned}", auth: "agent", body: `{"project_id":"{project}","status":"Done"}`, status: 403, code: "forbidden"},
		{name: "callback unknown task", method: "POST", path: "/api/agent_callback/999999", auth: "agent", body: `{"project_id":"{project}"}`, status: 404, code: "not_found"},
		{name: "callback task of another project", method: "POST", path: "/api/agent_callback/{other}", auth: "agent", body: `{"project_id":"{project}"}`, status: 404, code: "not_found"},
		{name: "callback body over 1 MiB", method: "POST", path: "/api/agent_callback/{task}", auth: "agent", body: `{"project_id":"{project}","message":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},

		// GET /api/projects/{projectId}/tasks
		{name: "project list", method: "GET", path: "/api/projects/{project}/tasks", auth: "ro", status: 200, check: oaNoConversationInLists},
		{name: "project list as agent", method: "GET", path: "/api/projects/{project}/tasks?status=Todo", auth: "agent", status: 200},
		{name: "project list assigned=me", method: "GET", path: "/api/projects/{project}/tasks?assigned=me", auth: "agent", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				items := r.list(t)
				if len(items) == 0 {
					t.Fatal("the agent has no tasks")
				}
				for _, item := range items {
					if item["agent_id"] != float64(h.agent.ID) {
						t.Errorf("assigned=me let a task of agent %v through", item["agent_id"])
					}
				}
			}},
		{name: "project list pages with Link", method: "GET", path: "/api/projects/{project}/tasks?limit=1", auth: "agent", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				oaPages("agent", "/api/projects/"+h.project+"/tasks")(t, h, r, ids)
			}},
		{name: "project list assigned=me for a user", method: "GET", path: "/api/projects/{project}/tasks?assigned=me", auth: "ro", status: 400, code: "invalid_argument"},
		{name: "project list bad assigned", method: "GET", path: "/api/projects/{project}/tasks?assigned=you", auth: "agent", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "project list bad limit", method: "GET", path: "/api/projects/{project}/tasks?limit=0", auth: "agent", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "project list no credentials", method: "GET", path: "/api/projects/{project}/tasks", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project list wrong digest", method: "GET", path: "/api/projects/{project}/tasks", auth: "agent-bad-digest", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project list unknown agent", method: "GET", path: "/api/projects/{project}/tasks", auth: "agent-unknown", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project list agent of another project", method: "GET", path: "/api/projects/{project}/tasks", auth: "agent-other", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project list without task:read", method: "GET", path: "/api/projects/{project}/tasks", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "project list another project", method: "GET", path: "/api/projects/{otherProject}/tasks", auth: "ro", status: 404, code: "not_found"},

		// GET /api/projects/{projectId}/tasks/{id}
		{name: "project get", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "ro", status: 200, check: oaHasConversation},
		{name: "project get as agent", method: "GET", path: "/api/projects/{project}/tasks/{waiting}", auth: "agent", status: 200, check: oaHasConversation},
		{name: "project get not modified", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "agent", header: map[string]string{"If-None-Match": "{taskETag}"}, status: 304},
		{name: "project get id not an integer", method: "GET", path: "/api/projects/{project}/tasks/abc", auth: "agent", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "project get no credentials", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project get wrong digest", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "agent-bad-digest", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project get without task:read", method: "GET", path: "/api/projects/{project}/tasks/{task}", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "project get another project", method: "GET", path: "/api/projects/{otherProject}/tasks/{other}", auth: "ro", status: 404, code: "not_found"},
		{name: "project get task of another project", method: "GET", path: "/api/projects/{project}/tasks/{other}", auth: "agent", status: 404, code: "not_found"},

		// POST /api/projects/{projectId}/tasks
		{name: "project create as agent", method: "POST", path: "/api/projects/{project}/tasks", auth: "agent", body: `{"summary":"mine","agent_id":{agent}}`, status: 201,
			check: func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
				var task struct {
					Source  string `json:"source"`
					AgentID int64  `json:"agent_id"`
				}
				if err := json.Unmarshal(r.body, &task); err != nil || task.Source != "agent" || task.AgentID != h.agent.ID {
					t.Errorf("an agent's task: %s (%v), want source agent, assigned to the agent", r.body, err)
				}
			}},
		{name: "project create keyed", method: "POST", path: "/api/projects/{project}/tasks", auth: "agent", body: `{"summary":"once"}`,
			header: map[string]string{"Idempotency-Key": "oa-project-create"}, status: 201},
		{name: "project create key reused", method: "POST", path: "/api/projects/{project}/tasks", auth: "agent", body: `{"summary":"twice"}`,
			header: map[string]string{"Idempotency-Key": "oa-project-create"}, status: 409, code: "conflict"},
		{name: "project create missing summary", method: "POST", path: "/api/projects/{project}/tasks", auth: "agent", body: `{"details":"d"}`, req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "project create no credentials", method: "POST", path: "/api/projects/{project}/tasks", auth: "none", body: `{"summary":"s"}`, req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "project create without task:write", method: "POST", path: "/api/projects/{project}/tasks", auth: "ro", body: `{"summary":"s"}`, req: oaInvalid, status: 403, code: "forbidden"},
		{name: "project create another project", method: "POST", path: "/api/projects/{otherProject}/tasks", auth: "wo", body: `{"summary":"s"}`, status: 404, code: "not_found"},
		{name: "project create body over 1 MiB", method: "POST", path: "/api/projects/{project}/tasks", auth: "agent", body: `{"summary":"` + huge + `"}`, req: oaUnchecked, status: 413, code: "payload_too_large"},
	}
}

// oaNewestFirst checks that a list is in descending id order.
func oaNewestFirst(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
	var tasks []model.Task
	if err := json.Unmarshal(r.body, &tasks); err != nil {
		t.Fatal(err)
	}
	for i := 1; i < len(tasks); i++ {
		if tasks[i].ID >= tasks[i-1].ID {
			t.Errorf("order=desc: task %d after %d", tasks[i].ID, tasks[i-1].ID)
		}
	}
}
