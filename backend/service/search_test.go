package service_test

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestSearch: one search finds a project's tasks, messages and documents, title matches
// first and newest first within them, with snippets around the match and the UI's
// links; another project's are never found; each type needs its scope; bad input is
// refused.
func TestSearch(t *testing.T) { pgtest.Engines(t, testSearch) }

func testSearch(t *testing.T, engine string) {
	ctx := context.Background()
	st := testenv.OpenStore(t, engine, store.Options{Synchronous: "NORMAL"})
	now := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	svc := service.New(st, service.Options{Now: func() time.Time { now = now.Add(time.Second); return now }})
	t.Cleanup(func() { svc.Close(); st.Close() })
	project := func(name string) *auth.Principal {
		p, err := svc.CreateProject(ctx, auth.Owner(""), name, "")
		if err != nil {
			t.Fatal(err)
		}
		return auth.Owner(p.ID)
	}
	owner, outsider := project("p"), project("other")

	long := strings.Repeat("filler words ", 20) + "see ticket 399 for the cause " + strings.Repeat("and more ", 20)
	var ids []int64 // in the order created
	for _, in := range []service.CreateTaskInput{
		{Summary: "Ticket 399 is broken", Details: "the printer"},
		{Summary: "Printer jam", Details: long},
		{Summary: "Unrelated"},
	} {
		task, err := svc.CreateTask(ctx, owner, in, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	conv, err := svc.CreateConversation(ctx, owner, service.CreateConversationInput{Name: ptr("Support"), Message: ptr("about TICKET 399: fixed?")}, "")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := svc.ShareDocument(ctx, owner, conv.UUID, service.DocumentUpload{Name: "Ticket 399 notes.txt", Body: strings.NewReader("x")})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateTask(ctx, outsider, service.CreateTaskInput{Summary: "ticket 399 elsewhere"}, ""); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.CreateConversation(ctx, outsider, service.CreateConversationInput{Message: ptr("ticket 399 elsewhere")}, ""); err != nil {
		t.Fatal(err)
	}

	// A message in "Support" that says support, then a task that says it in its details:
	// only a task's summary and a document's name are titles that rank first, so the task
	// (newer) comes before the message, whose title "owner in Support" was not searched.
	if _, err := svc.PostMessage(ctx, owner, conv.UUID, service.PostMessageInput{Message: ptr("support is on it")}, ""); err != nil {
		t.Fatal(err)
	}
	queue, err := svc.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "Printer queue", Details: "ask Support first"}, "")
	if err != nil {
		t.Fatal(err)
	}
	if found, err := svc.Search(ctx, owner, service.SearchInput{Query: "support", Limit: 20}); err != nil || len(found) != 2 ||
		found[0].ID != queue.ID || found[1].Type != "message" || found[1].Snippet != "support is on it" {
		t.Fatalf("support: %+v, %v; want the task, then the message", found, err)
	}

	got, err := svc.Search(ctx, owner, service.SearchInput{Query: " ticket 399 ", Limit: 20})
	if err != nil {
		t.Fatal(err)
	}
	convURL := "/conversations/" + itoa(conv.ID)
	want := []service.SearchResult{
		{Type: "document", ID: doc.ID, Title: "Ticket 399 notes.txt", Snippet: "Shared by owner in Support", URL: convURL},
		{Type: "task", ID: ids[0], Title: "Ticket 399 is broken", Snippet: "the printer", URL: "/tasks/" + itoa(ids[0])},
		{Type: "message", Title: "owner in Support", Snippet: "about TICKET 399: fixed?", URL: convURL},
		{Type: "task", ID: ids[1], Title: "Printer jam", URL: "/tasks/" + itoa(ids[1])},
	}
	if len(got) != len(want) {
		t.Fatalf("found %+v, want %d results", got, len(want))
	}
	for i, w := range want {
		g := got[i]
		if g.Type != w.Type || (w.ID != 0 && g.ID != w.ID) || g.Title != w.Title || g.URL != w.URL || (w.Snippet != "" && g.Snippet != w.Snippet) {
			t.Fatalf("result %d: %+v, want %+v", i, g, w)
		}
	}
	snippet := got[3].Snippet
	if !strings.Contains(snippet, "ticket 399") || !strings.HasPrefix(snippet, "…") || !strings.HasSuffix(snippet, "…") || utf8.RuneCountInString(snippet) > 122 {
		t.Fatalf("a long text's snippet: %q, want about 120 characters around the match", snippet)
	}

	if two, err := svc.Search(ctx, owner, service.SearchInput{Query: "ticket 399", Limit: 2}); err != nil || len(two) != 2 || two[0].Type != "document" || two[1].Type != "task" {
		t.Fatalf("limit 2: %+v, %v", two, err)
	}
	if theirs, err := svc.Search(ctx, outsider, service.SearchInput{Query: "ticket 399", Limit: 20}); err != nil || len(theirs) != 2 || theirs[0].Title != "ticket 399 elsewhere" {
		t.Fatalf("the other project's search: %+v, %v", theirs, err)
	}

	types := func(p *auth.Principal) string {
		t.Helper()
		found, err := svc.Search(ctx, p, service.SearchInput{Query: "ticket 399", Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, r := range found {
			out = append(out, r.Type)
		}
		return strings.Join(out, ",")
	}
	scoped := func(scopes ...string) *auth.Principal {
		return &auth.Principal{Kind: auth.KindToken, ProjectID: owner.ProjectID, Name: "t", Scopes: scopes}
	}
	if got := types(scoped(auth.TaskRead)); got != "task,task" {
		t.Fatalf("task:read only finds %s, want the tasks", got)
	}
	if got := types(scoped(auth.MessagingRead)); got != "document,message" {
		t.Fatalf("messaging:read only finds %s, want the document and the message", got)
	}
	_, err = svc.Search(ctx, scoped(auth.Admin), service.SearchInput{Query: "ticket", Limit: 20})
	wantCode(t, err, errs.Forbidden)

	for _, bad := range []service.SearchInput{
		{Query: "", Limit: 20}, {Query: "   ", Limit: 20}, {Query: strings.Repeat("é", 201), Limit: 20},
		{Query: "x", Limit: 51}, {Query: "x", Limit: 0},
	} {
		_, err := svc.Search(ctx, owner, bad)
		wantCode(t, err, errs.InvalidArgument)
	}
	if _, err := svc.Search(ctx, owner, service.SearchInput{Query: strings.Repeat("é", 200), Limit: 50}); err != nil {
		t.Fatalf("200 characters and limit 50 are allowed: %v", err)
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
