package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestStreamedListsSameBytes: every list asked for without limit is streamed row by row
// now; its bytes must be those the list had when it was built whole in memory (the
// service's Limit 0 read, encoded at once), for tasks of every shape, across several
// of the pages the stream reads (500 rows each), with and without filters.
func TestStreamedListsSameBytes(t *testing.T) { pgtest.Engines(t, testStreamedListsSameBytes) }

func testStreamedListsSameBytes(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	pid := env.Project.ID
	owner := auth.Owner(pid)
	svc := env.Service
	token := env.Token(t, pid, auth.TaskRead, auth.MessagingRead)

	agent := env.Agent(t, pid, "streamer")
	if _, err := svc.CreateSkill(ctx, owner, "go", "writes Go"); err != nil {
		t.Fatal(err)
	}
	conv, err := svc.CreateConversation(ctx, owner, service.CreateConversationInput{Message: ptr("first <b>&</b>")}, "")
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"plain", `quotes " and \ backslash`, "<script>&amp;</script>", "emoji 🚀 and é", "line\nbreak\ttab", "\u2028 separators \u2029"}
	statuses := []string{"Backlog", "Todo", "Doing", "Waiting", "Done", "Failed"}
	const n = 1100 // more than two pages of the stream
	for i := range n {
		in := service.CreateTaskInput{Summary: fmt.Sprintf("task %d %s", i, texts[i%len(texts)]), Details: texts[(i+1)%len(texts)]}
		if i%3 == 0 {
			in.Steps = []service.StepInput{{Title: "one " + texts[i%len(texts)]}, {Title: "two"}}
		}
		if i%4 == 1 {
			in.AgentID = &agent.ID
		}
		if i%7 == 2 {
			in.ConversationID = model.Ref(strconv.FormatInt(conv.ID, 10))
		}
		if i%11 == 3 && in.AgentID == nil {
			in.RequiredSkills = []string{"go"}
		}
		if i%13 == 4 {
			in.TaskType = "review"
		}
		task, err := svc.CreateTask(ctx, owner, in, "")
		if err != nil {
			t.Fatal(err)
		}
		st := statuses[i%len(statuses)]
		var waiting *string
		if st == "Waiting" {
			waiting = ptr("which one? " + texts[i%len(texts)])
		}
		if _, err := svc.SetTaskStatus(ctx, owner, task.ID, st, waiting, nil, nil); err != nil {
			t.Fatal(err)
		}
		if in.Steps != nil && i%2 == 0 {
			if _, err := svc.SetStepStatus(ctx, owner, task.ID, 0, "completed", nil); err != nil {
				t.Fatal(err)
			}
		}
		if i%50 == 0 {
			if err := svc.DeleteTask(ctx, owner, task.ID, nil); err != nil { // gaps in the ids
				t.Fatal(err)
			}
		}
	}
	for i := range 620 {
		msg := texts[i%len(texts)]
		m, err := svc.PostMessage(ctx, owner, strconv.FormatInt(conv.ID, 10), service.PostMessageInput{Message: &msg}, "")
		if err != nil {
			t.Fatal(err)
		}
		if i%5 == 0 {
			if _, err := svc.AddReaction(ctx, owner, m.ID, "👍"); err != nil {
				t.Fatal(err)
			}
		}
	}
	for i := range 30 {
		if _, err := svc.CreateConversation(ctx, owner, service.CreateConversationInput{Message: ptr("conv"), Name: ptr(fmt.Sprintf("c%d %s", i, texts[i%len(texts)]))}, ""); err != nil {
			t.Fatal(err)
		}
	}

	reader, err := svc.Authenticate(ctx, service.Credentials{Where: service.WhereREST, Authorization: "Bearer " + token})
	if err != nil {
		t.Fatal(err)
	}

	// The old path: the whole list read at once, encoded at once.
	wholeTasks := func(in service.ListTasksInput) []byte {
		tasks, _, err := svc.ListTasks(ctx, owner, in)
		if err != nil {
			t.Fatal(err)
		}
		b := []byte{'['}
		for i := range tasks {
			if i > 0 {
				b = append(b, ',')
			}
			if b, err = tasks[i].AppendJSON(b); err != nil {
				t.Fatal(err)
			}
		}
		return append(b, ']')
	}
	marshal := func(v any, err error) []byte {
		if err != nil {
			t.Fatal(err)
		}
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	ref := strconv.FormatInt(conv.ID, 10)
	base := "/api/projects/" + pid
	cases := []struct {
		path string
		want []byte
	}{
		{"/api/tasks", wholeTasks(service.ListTasksInput{})},
		{base + "/tasks", wholeTasks(service.ListTasksInput{})},
		{"/api/tasks?status=Waiting", wholeTasks(service.ListTasksInput{Status: "Waiting"})},
		{"/api/tasks?agent_id=" + strconv.FormatInt(agent.ID, 10), wholeTasks(service.ListTasksInput{AgentID: &agent.ID})},
		{"/api/tasks?after_id=300", wholeTasks(service.ListTasksInput{PageInput: service.PageInput{AfterID: 300}})},
		{"/api/tasks?status=Done&after_id=1000000", []byte("[]")},
		{base + "/conversations", marshal(first(svc.ListConversations(ctx, reader, service.PageInput{})))}, // its read markers are the token's
		{base + "/conversations/" + ref + "/messages", marshal(first(svc.ListMessages(ctx, owner, ref, service.PageInput{})))},
		{base + "/conversations/" + ref + "/tasks", marshal(first(svc.ConversationTasks(ctx, owner, ref, service.PageInput{})))},
		{base + "/conversations/" + ref + "/documents", []byte("[]")},
	}
	for _, tc := range cases {
		for _, gz := range []bool{false, true} {
			h := http.Header{}
			if !gz {
				h.Set("Accept-Encoding", "identity") // else Go's client asks for gzip and inflates
			}
			resp := env.Do(t, testenv.Request{Method: "GET", Path: tc.path, Token: token, Header: h})
			if resp.Status != http.StatusOK {
				t.Fatalf("GET %s: %d %s", tc.path, resp.Status, resp.Body)
			}
			if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
				t.Errorf("GET %s: Content-Type %q", tc.path, ct)
			}
			if resp.Header.Get("Link") != "" {
				t.Errorf("GET %s: a whole list has no next page, Link %q", tc.path, resp.Header.Get("Link"))
			}
			if !bytes.Equal(resp.Body, tc.want) {
				t.Errorf("GET %s (gzip %v): %d bytes differ from the whole list's %d bytes", tc.path, gz, len(resp.Body), len(tc.want))
			}
		}
	}
	// A bad request still gets its status and envelope: the first page is read first.
	if resp := env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks?status=Nope", Token: token}); resp.Status != http.StatusBadRequest || resp.ErrorCode() == "" {
		t.Errorf("bad status filter: %d %s", resp.Status, resp.Body)
	}
}

func ptr[T any](v T) *T { return &v }

func first[T any](v T, _ bool, err error) (T, error) { return v, err }

// TestTaskCountsAndNewestFirst: the counts of GET /api/tasks/counts (and GraphQL
// taskCounts) match the tasks; order=desc lists newest first, paged by Link and whole.
func TestTaskCountsAndNewestFirst(t *testing.T) { pgtest.Engines(t, testTaskCountsAndNewestFirst) }

func testTaskCountsAndNewestFirst(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	pid := env.Project.ID
	owner := auth.Owner(pid)
	token := env.Token(t, pid, auth.TaskRead)
	var ids []int64
	for i, st := range []string{"Done", "Done", "Waiting", "Backlog", "Done"} {
		task, err := env.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: fmt.Sprint("t", i)}, "")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := env.Service.SetTaskStatus(ctx, owner, task.ID, st, ptr("q"), nil, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	var counts map[string]int64
	env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks/counts", Token: token}).JSON(t, &counts)
	want := map[string]int64{"Backlog": 1, "Todo": 0, "Doing": 0, "Waiting": 1, "Done": 3, "Failed": 0, "total": 5}
	if fmt.Sprint(counts) != fmt.Sprint(want) {
		t.Errorf("counts %v, want %v", counts, want)
	}
	// An agent's counts.
	agent := env.Agent(t, pid, "counted")
	if _, err := env.Service.AssignTask(ctx, owner, ids[0], &agent.ID, nil); err != nil {
		t.Fatal(err)
	}
	var mine map[string]int64
	env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/tasks/counts?agent_id=%d", agent.ID), Token: token}).JSON(t, &mine)
	if mine["Done"] != 1 || mine["total"] != 1 {
		t.Errorf("counts of agent %d: %v", agent.ID, mine)
	}
	var gq struct {
		Data struct{ TaskCounts map[string]int64 } `json:"data"`
	}
	env.Do(t, testenv.Request{Method: "POST", Path: "/graphql", Token: token, Body: map[string]string{"query": "{ taskCounts { done waiting total } }"}}).JSON(t, &gq)
	if c := gq.Data.TaskCounts; c["done"] != 3 || c["waiting"] != 1 || c["total"] != 5 {
		t.Errorf("graphql taskCounts %v", c)
	}

	// Done newest first, two at a time, following Link.
	var got []int64
	for path := "/api/tasks?status=Done&order=desc&limit=2"; path != ""; {
		r := env.Do(t, testenv.Request{Method: "GET", Path: path, Token: token})
		var page []model.Task
		r.JSON(t, &page)
		for _, task := range page {
			got = append(got, task.ID)
		}
		path = ""
		if link := r.Header.Get("Link"); link != "" {
			path = link[1:bytes.IndexByte([]byte(link), '>')]
		}
	}
	if want := fmt.Sprint([]int64{ids[4], ids[1], ids[0]}); fmt.Sprint(got) != want {
		t.Errorf("Done newest first, paged: %v, want %v", got, want)
	}
	var whole []model.Task
	env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks?order=desc", Token: token}).JSON(t, &whole)
	if len(whole) != 5 || whole[0].ID != ids[4] || whole[4].ID != ids[0] {
		t.Errorf("whole list newest first: %v", whole)
	}
}

// TestTaskSearch: GET /api/tasks?q= finds the tasks holding every word (by prefix),
// with status, paging (Link) and order; counts?q= counts what it finds; GraphQL
// tasks(q:) and taskCounts(q:) the same.
func TestTaskSearch(t *testing.T) { pgtest.Engines(t, testTaskSearch) }

func testTaskSearch(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	pid := env.Project.ID
	owner := auth.Owner(pid)
	token := env.Token(t, pid, auth.TaskRead)
	var ids []int64
	for i, s := range []struct{ summary, details, status string }{
		{"Deploy the café", "after review", "Todo"},
		{"Write notes", "the deployment checklist", "Done"},
		{"Deploy again", "", "Done"},
		{"Unrelated", "nothing here", "Done"},
	} {
		task, err := env.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: s.summary, Details: s.details}, "")
		if err != nil {
			t.Fatal(i, err)
		}
		if _, err := env.Service.SetTaskStatus(ctx, owner, task.ID, s.status, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	list := func(path string) ([]int64, string) {
		t.Helper()
		r := env.Do(t, testenv.Request{Method: "GET", Path: path, Token: token})
		if r.Status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, r.Status, r.Body)
		}
		var tasks []model.Task
		r.JSON(t, &tasks)
		var out []int64
		for _, task := range tasks {
			out = append(out, task.ID)
		}
		return out, r.Header.Get("Link")
	}
	check := func(path string, want ...int64) {
		t.Helper()
		if got, _ := list(path); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("GET %s: %v, want %v", path, got, want)
		}
	}
	check("/api/tasks?q=deploy", ids[0], ids[1], ids[2])
	check("/api/tasks?q=Cafe", ids[0])
	check("/api/tasks?q=deploy&status=Done&order=desc", ids[2], ids[1])
	check("/api/projects/"+pid+"/tasks?q=deploy%20check", ids[1])
	got, link := list("/api/tasks?q=deploy&limit=2")
	if fmt.Sprint(got) != fmt.Sprint(ids[:2]) || !bytes.Contains([]byte(link), []byte("q=deploy")) {
		t.Errorf("first page %v, Link %q", got, link)
	}
	check(link[1:bytes.IndexByte([]byte(link), '>')], ids[2])

	var counts map[string]int64
	env.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks/counts?q=deploy", Token: token}).JSON(t, &counts)
	if counts["Todo"] != 1 || counts["Done"] != 2 || counts["total"] != 3 {
		t.Errorf("counts?q=deploy: %v", counts)
	}
	for _, bad := range []string{"/api/tasks?q=", "/api/tasks?q=%2A%2A", "/api/tasks/counts?q=%20"} {
		if r := env.Do(t, testenv.Request{Method: "GET", Path: bad, Token: token}); r.Status != http.StatusBadRequest || r.ErrorCode() != "invalid_argument" {
			t.Errorf("GET %s: %d %s", bad, r.Status, r.Body)
		}
	}

	var gq struct {
		Data struct {
			Tasks      []struct{ ID int64 }
			TaskCounts struct{ Done, Total int64 }
		} `json:"data"`
		Errors []any `json:"errors"`
	}
	q := `{ tasks(q: "deploy", status: Done) { id } taskCounts(q: "deploy") { done total } }`
	env.Do(t, testenv.Request{Method: "POST", Path: "/graphql", Token: token, Body: map[string]string{"query": q}}).JSON(t, &gq)
	if len(gq.Errors) > 0 || len(gq.Data.Tasks) != 2 || gq.Data.Tasks[0].ID != ids[1] || gq.Data.TaskCounts.Done != 2 || gq.Data.TaskCounts.Total != 3 {
		t.Errorf("graphql search: %+v", gq)
	}
}
