package api_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/service"
)

// oaSearchScenarios cover GET /api/search (search.go) over the harness's project: its
// conversation "general" (hello, second, third; notes.txt, plan.md, résumé.txt), its
// tasks "oa linked 0..2", and the other project's conversation "secret".
func oaSearchScenarios() []oaCase {
	found := func(want ...string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		return oaIs(func(h *oaHarness, v struct{ Results []service.SearchResult }) error {
			var got []string
			for _, r := range v.Results {
				got = append(got, r.Type+" "+r.Title+" "+r.URL)
			}
			if strings.Join(got, "\n") != strings.Join(want, "\n") {
				return fmt.Errorf("found %q, want %q", got, want)
			}
			return nil
		})
	}
	allTasks := oaIs(func(h *oaHarness, v struct{ Results []service.SearchResult }) error {
		if len(v.Results) < 3 {
			return fmt.Errorf("%d results, want the 3 linked tasks at least", len(v.Results))
		}
		for _, r := range v.Results {
			if r.Type != "task" || !strings.HasPrefix(r.Title, "oa linked") || r.URL != fmt.Sprintf("/tasks/%d", r.ID) {
				return fmt.Errorf("%+v is not a linked task", r)
			}
		}
		return nil
	})
	conv := func(h *oaHarness) string { return fmt.Sprintf("/conversations/%d", h.conv.ID) }
	const search = "/api/search"
	return []oaCase{
		{name: "search", method: "GET", path: search + "?q=R%C3%A9sum%C3%A9", auth: "all", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				found("document résumé.txt "+conv(h))(t, h, r, ids)
			}},
		{name: "search messages", method: "GET", path: search + "?q=nothing+ELSE&limit=1", auth: "mr", status: 200,
			check: func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
				found(fmt.Sprintf("message owner in Conversation %d /conversations/%d", h.emptyConv.ID, h.emptyConv.ID))(t, h, r, ids)
			}},
		{name: "search tasks", method: "GET", path: search + "?q=oa+linked", auth: "ro", status: 200, check: allTasks},
		{name: "search another project's words", method: "GET", path: search + "?q=secret", auth: "all", status: 200, check: found()},
		{name: "search without q", method: "GET", path: search, auth: "all", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "search empty q", method: "GET", path: search + "?q=", auth: "all", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "search blank q", method: "GET", path: search + "?q=%20%20", auth: "all", status: 400, code: "invalid_argument"},
		{name: "search q too long", method: "GET", path: search + "?q=" + strings.Repeat("x", service.MaxSearchQueryChars+1), auth: "all", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "search limit too big", method: "GET", path: search + "?q=x&limit=51", auth: "all", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "search limit not a number", method: "GET", path: search + "?q=x&limit=ten", auth: "all", req: oaInvalid, status: 400, code: "invalid_argument"},
		{name: "search no credentials", method: "GET", path: search + "?q=x", auth: "none", req: oaInvalid, status: 401, code: "unauthenticated"},
		// Agents use the project's paths; this one has none (as GET /api/tasks).
		{name: "search as an agent", method: "GET", path: search + "?q=x", auth: "agent", req: oaInvalid, status: 401, code: "unauthenticated"},
		{name: "search without a read scope", method: "GET", path: search + "?q=x", auth: "wo", req: oaInvalid, status: 403, code: "forbidden"},
	}
}
