package store_test

import (
	"context"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestPostgresStatementWorklist runs the life of a few tasks through REST on SQLite,
// and the rest of the service (platformWorkload),
// then prepares every statement text the store ran, as it runs on PostgreSQL
// (PostgresText: as written, or the statement's PostgreSQL text), on a real PostgreSQL
// with the postgres schema: PostgreSQL parses and type-checks each one. It fails on a
// statement PostgreSQL refuses, unless it belongs to SQLite's machinery, which the
// store does not run there (sqliteOnlyStatement); go test -v lists those.
func TestPostgresStatementWorklist(t *testing.T) {
	ctx := context.Background()
	pg, err := postgres.Open(ctx, pgtest.DB(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()

	s := serve(t, t.TempDir())
	must := func(want int, method, path, body string) string {
		t.Helper()
		code, got := s.call(t, method, path, body)
		if code != want {
			t.Fatalf("%s %s: %d %s, want %d", method, path, code, got, want)
		}
		return got
	}
	if _, err := s.Service.CreateAgent(ctx, auth.Owner(s.project), "builder"); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		must(http.StatusCreated, "POST", "/api/tasks", fmt.Sprintf(`{"summary":"Deploy invoicing %d","details":"d","steps":[{"title":"a"},{"title":"b"}]}`, i))
	}
	must(http.StatusOK, "GET", "/api/tasks", "")
	must(http.StatusOK, "GET", "/api/tasks?limit=2", "")
	must(http.StatusOK, "GET", "/api/tasks?q=invoic", "")
	must(http.StatusOK, "GET", "/api/tasks/counts", "")
	must(http.StatusOK, "GET", "/api/tasks/1", "")
	must(http.StatusOK, "PATCH", "/api/tasks/1", `{"summary":"Deploy invoicing v2"}`)
	must(http.StatusOK, "PUT", "/api/tasks/1/steps/0/status", `{"status":"completed"}`)
	must(http.StatusOK, "PUT", "/api/tasks/1/status", `{"status":"Waiting","waiting_details":"which region?"}`)
	must(http.StatusOK, "POST", "/api/tasks/1/respond", `{"response":"eu-west"}`)
	must(http.StatusOK, "PUT", "/api/tasks/1/status", `{"status":"Done"}`)
	must(http.StatusNoContent, "DELETE", "/api/tasks/2", "")
	must(http.StatusOK, "DELETE", "/api/tasks/done", "")

	platformWorkload(t, s)

	texts := store.StatementTexts(s.Service.Store())
	slices.Sort(texts)
	texts = slices.Compact(texts)
	if len(texts) < 10 {
		t.Fatalf("only %d statements recorded", len(texts))
	}
	var refused []string
	for _, q := range texts {
		pq := store.PostgresText(q)
		st, err := pg.PrepareContext(ctx, pq)
		if err == nil {
			st.Close()
			continue
		}
		// A parameter written as SQLite alone takes it shows as an error about a
		// parameter; anything else is SQL that differs between the engines: the worklist.
		if msg := err.Error(); strings.Contains(msg, "parameter") || strings.Contains(msg, `"$`) || strings.Contains(msg, `"?`) {
			t.Errorf("a statement's parameters are not numbered ($1, $2, ...):\n%s\n-> %v", pq, err)
		}
		refused = append(refused, fmt.Sprintf("%s\n    -> %v", oneLine(pq), err))
		if !sqliteOnlyStatement(q) {
			t.Errorf("PostgreSQL refuses a statement the PostgreSQL store would run: give it a PostgreSQL text (dialect.go):\n%s\n-> %v", pq, err)
		}
	}
	t.Logf("%d statements, %d prepare on PostgreSQL as they are; %d need a PostgreSQL text:\n%s",
		len(texts), len(texts)-len(refused), len(refused), strings.Join(refused, "\n"))
}

// sqliteOnlyStatement: the statements of SQLite's machinery, which the store does not
// run on PostgreSQL (the FTS5 index and its pending queue, the data_version watch, the
// FTS5 form of a task search, which TaskFilter.where writes differently there).
func sqliteOnlyStatement(q string) bool {
	// json_group_array: SQLite's column of a JSON aggregate, whose PostgreSQL twin the
	// store takes from the engine's dialect (dialect.go).
	for _, s := range []string{"tasks_fts", "PRAGMA ", "json_group_array"} {
		if strings.Contains(q, s) {
			return true
		}
	}
	return false
}

// platformWorkload calls the rest of the service (not knowledge bases yet), as the
// owner, so that their statements are in the worklist too. A call that fails is logged,
// not fatal: the workload is there to run statements.
func platformWorkload(t *testing.T, s *served) {
	ctx := context.Background()
	svc, owner := s.Service, auth.Owner(s.project)
	str := func(v string) *string { return &v }
	try := func(what string, err error) {
		if err != nil {
			t.Logf("workload: %s: %v", what, err)
		}
	}
	_, err := svc.CreateProject(ctx, owner, "Second", "second")
	try("CreateProject", err)
	_, err = svc.Projects(ctx, owner)
	try("Projects", err)
	agent, err := svc.CreateAgent(ctx, owner, "reviewer")
	try("CreateAgent", err)
	if agent != nil {
		_, err = svc.UpdateAgent(ctx, owner, agent.ID, service.UpdateAgentInput{DisplayName: str("Reviewer")})
		try("UpdateAgent", err)
	}
	_, err = svc.Agents(ctx, owner)
	try("Agents", err)
	skill, err := svc.CreateSkill(ctx, owner, "go", "writes Go")
	try("CreateSkill", err)
	if skill != nil && agent != nil {
		_, _, err = svc.SetAgentSkill(ctx, owner, agent.ID, skill.ID, true)
		try("SetAgentSkill", err)
	}
	_, err = svc.Skills(ctx, owner)
	try("Skills", err)
	conv, err := svc.CreateConversation(ctx, owner, service.CreateConversationInput{Name: str("design"), Message: str("hello")}, "")
	try("CreateConversation", err)
	if conv != nil {
		ref := fmt.Sprint(conv.ID)
		msg, err := svc.PostMessage(ctx, owner, ref, service.PostMessageInput{Message: str("second")}, "k1")
		try("PostMessage", err)
		_, _, err = svc.ListMessages(ctx, owner, ref, service.PageInput{Limit: 10})
		try("ListMessages", err)
		if msg != nil {
			_, err = svc.AddReaction(ctx, owner, msg.ID, "👍")
			try("AddReaction", err)
			_, err = svc.Reactions(ctx, owner, msg.ID)
			try("Reactions", err)
		}
		doc, err := svc.ShareDocument(ctx, owner, ref, service.DocumentUpload{Name: "a.txt", MimeType: "text/plain", Body: strings.NewReader("text")})
		try("ShareDocument", err)
		_, _, err = svc.ListDocuments(ctx, owner, ref, service.PageInput{Limit: 10})
		try("ListDocuments", err)
		if doc != nil {
			_, _, err = svc.GetDocument(ctx, owner, ref, doc.ID)
			try("GetDocument", err)
		}
		_, _, err = svc.ListConversations(ctx, owner, service.PageInput{Limit: 10})
		try("ListConversations", err)
	}
	job, err := svc.CreateJob(ctx, owner, service.JobInput{Name: str("nightly"), Cron: str("0 3 * * *"), Summary: str("Nightly build")})
	try("CreateJob", err)
	if job != nil {
		_, err = svc.RunJobNow(ctx, owner, job.ID)
		try("RunJobNow", err)
		_, err = svc.JobRuns(ctx, owner, job.ID, 0, 10)
		try("JobRuns", err)
	}
	_, err = svc.Jobs(ctx, owner)
	try("Jobs", err)
	hook, err := svc.CreateWebhook(ctx, owner, service.WebhookInput{URL: str("https://hooks.example.com/agentdesk")})
	try("CreateWebhook", err)
	if hook != nil {
		_, err = svc.WebhookDeliveries(ctx, owner, hook.ID, 0, 10)
		try("WebhookDeliveries", err)
	}
	_, err = svc.Webhooks(ctx, owner)
	try("Webhooks", err)
	_, err = svc.AddMember(ctx, owner, service.AddMemberInput{Name: "Dana", Email: "dana@example.com", Role: "member"})
	try("AddMember", err)
	_, err = svc.Members(ctx, owner)
	try("Members", err)
	toks, err := svc.Tokens(ctx, owner)
	try("Tokens", err)
	_, tok, err := svc.CreateToken(ctx, owner, service.CreateTokenInput{Name: "spare", Type: "platform", Scopes: []string{auth.TaskRead}})
	try("CreateToken", err)
	if tok != nil {
		try("RevokeToken", svc.RevokeToken(ctx, owner, tok.ID))
	}
	_ = toks
	try("FlushTokenUse", svc.FlushTokenUse(ctx))
	try("IndexActivity", svc.IndexActivity(ctx))
	_, err = svc.Activity(ctx, owner, service.ActivityInput{Limit: 10})
	try("Activity", err)
	usd := 10.0
	_, err = svc.SetBudget(ctx, owner, &usd)
	try("SetBudget", err)
	_, err = svc.Usage(ctx, owner, "2026-01-01", "2026-12-31")
	try("Usage", err)
	try("PruneIdempotencyKeys", svc.PruneIdempotencyKeys(ctx))
	try("PruneSessions", svc.PruneSessions(ctx))
}

func oneLine(q string) string { return strings.Join(strings.Fields(q), " ") }
