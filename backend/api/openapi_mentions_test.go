package api_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/agentdesk/agentdesk/backend/model"
)

// oaMentionScenarios cover GET /api/projects/{projectId}/mentions (mentions.go): the
// harness's agent is mentioned in its conversation, then finds the message.
func oaMentionScenarios() []oaCase {
	const mentions = "/api/projects/{project}/mentions"
	mentioned := func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		posted := h.call(t, oaCase{method: "POST", path: "/api/projects/{project}/conversations/{conv}/messages", auth: "mw",
			body: fmt.Sprintf(`{"message":"@%s, a look please"}`, oaAgentName), status: 201}, ids)
		var m model.Message
		if err := json.Unmarshal(posted.body, &m); err != nil {
			t.Fatal(err)
		}
		list := h.call(t, oaCase{method: "GET", path: mentions + "?limit=1", auth: "agent", status: 200}, ids)
		var got []model.Message
		if err := json.Unmarshal(list.body, &got); err != nil {
			t.Fatal(err)
		}
		if len(got) != 1 || got[0].ID != m.ID || len(got[0].Mentions) != 1 || *got[0].Mentions[0].AgentID != h.agent.ID {
			t.Fatalf("the agent's mentions %+v, want the message %d naming it", got, m.ID)
		}
	}
	return []oaCase{
		{name: "mentions of an agent", method: "GET", path: mentions, auth: "agent", status: 200, check: mentioned},
		{name: "mentions of a token", method: "GET", path: mentions + "?limit=5&before_id=1", auth: "mr", status: 200},
		{name: "mentions limit zero", method: "GET", path: mentions + "?limit=0", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "mentions before_id negative", method: "GET", path: mentions + "?before_id=-1", auth: "mr", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "mentions no credentials", method: "GET", path: mentions, auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "mentions without messaging:read", method: "GET", path: mentions, auth: "mw", req: oaInvalid, status: 403, code: "forbidden"},
		{name: "mentions of another project", method: "GET", path: mentions, auth: "otherMsg", status: 404, code: "not_found"},
	}
}
