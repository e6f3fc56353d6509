package mcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"slices"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/mcp"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// A test session: the SDK's client connected over one transport, and what the server
// sent it besides answers.
type session struct {
	*sdk.ClientSession
	progress chan *sdk.ProgressNotificationParams
	updated  chan string // resource URIs
}

// transport connects an MCP client to e as the holder of the credentials: over HTTP
// (/mcp, headers) or over stdio (agentdesk mcp, environment).
type transport struct {
	name    string
	connect func(t *testing.T, e *testenv.Env, c cred) *session
}

var transports = []transport{{"http", connectHTTP}, {"stdio", connectStdio}}

// cred is a credential: a token, or an agent of the project.
type cred struct {
	token   string
	project string
	agent   string
	headers http.Header
}

func tokenCred(token string) cred { return cred{token: token} }

func agentCred(t *testing.T, e *testenv.Env, name string) cred {
	e.Agent(t, e.Project.ID, name)
	return cred{project: e.Project.ID, agent: name, headers: e.AgentHeaders(t, e.Project.ID, name)}
}

func newClient(s *session) *sdk.Client {
	return sdk.NewClient(&sdk.Implementation{Name: "test", Version: "1"}, &sdk.ClientOptions{
		ProgressNotificationHandler: func(_ context.Context, r *sdk.ProgressNotificationClientRequest) {
			select {
			case s.progress <- r.Params:
			default:
			}
		},
		ResourceUpdatedHandler: func(_ context.Context, r *sdk.ResourceUpdatedNotificationRequest) {
			s.updated <- r.Params.URI
		},
	})
}

func newSession() *session {
	return &session{progress: make(chan *sdk.ProgressNotificationParams, 100), updated: make(chan string, 100)}
}

// headerTransport adds the credential's headers to each request.
type headerTransport struct{ h http.Header }

func (ht headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	for k, v := range ht.h {
		r.Header[k] = v
	}
	return http.DefaultTransport.RoundTrip(r)
}

func (c cred) httpHeaders() http.Header {
	if c.token != "" {
		return http.Header{"Authorization": {"Bearer " + c.token}}
	}
	h := c.headers.Clone()
	h.Set("X-Agentdesk-Project", c.project)
	return h
}

func connectHTTP(t *testing.T, e *testenv.Env, c cred) *session {
	t.Helper()
	s := newSession()
	tr := &sdk.StreamableClientTransport{Endpoint: e.URL + "/mcp",
		HTTPClient: &http.Client{Transport: headerTransport{c.httpHeaders()}}}
	cs, err := newClient(s).Connect(context.Background(), tr, nil)
	if err != nil {
		t.Fatalf("connect over HTTP: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s.ClientSession = cs
	return s
}

func connectStdio(t *testing.T, e *testenv.Env, c cred) *session {
	t.Helper()
	s := newSession()
	cmd := exec.Command(binary, "mcp")
	cmd.Env = append(os.Environ(), "AGENTDESK_URL="+e.URL, "AGENTDESK_DATA="+t.TempDir(),
		"AGENTDESK_TOKEN=", "SERVICE_PROJECT_ID=", "AGENT_NAME=", "SERVICE_API_TOKEN=", "SERVICE_TOKEN_SECRET=")
	if c.token != "" {
		cmd.Env = append(cmd.Env, "AGENTDESK_TOKEN="+c.token)
	} else {
		cmd.Env = append(cmd.Env, "SERVICE_PROJECT_ID="+c.project, "AGENT_NAME="+c.agent,
			"SERVICE_API_TOKEN="+c.headers.Get("X-Task-Authorization"), "SERVICE_NAMESPACE="+c.headers.Get("X-Task-Namespace"))
	}
	cmd.Stderr = testWriter{t}
	cs, err := newClient(s).Connect(context.Background(), &sdk.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatalf("connect over stdio: %v", err)
	}
	t.Cleanup(func() { cs.Close() })
	s.ClientSession = cs
	return s
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(b []byte) (int, error) {
	w.t.Logf("agentdesk mcp: %s", strings.TrimSpace(string(b)))
	return len(b), nil
}

func toolNames(t *testing.T, s *session) []string {
	t.Helper()
	res, err := s.ListTools(context.Background(), nil)
	if err != nil {
		t.Fatalf("tools/list: %v", err)
	}
	var names []string
	for _, tool := range res.Tools {
		names = append(names, tool.Name)
	}
	slices.Sort(names)
	return names
}

// call calls a tool that must succeed and decodes its structured result into out.
func call(t *testing.T, s *session, name string, args map[string]any, out any) {
	t.Helper()
	res := callResult(t, s, name, args, nil)
	if res.IsError {
		t.Fatalf("%s: isError: %s", name, text(res))
	}
	raw, _ := json.Marshal(res.StructuredContent)
	if err := json.Unmarshal(raw, out); err != nil {
		t.Fatalf("%s: decode %s: %v", name, raw, err)
	}
}

func callResult(t *testing.T, s *session, name string, args map[string]any, progressToken any) *sdk.CallToolResult {
	t.Helper()
	params := &sdk.CallToolParams{Name: name, Arguments: args}
	if progressToken != nil {
		params.SetProgressToken(progressToken)
	}
	res, err := s.CallTool(context.Background(), params)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	return res
}

func text(res *sdk.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*sdk.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

func each(t *testing.T, fn func(t *testing.T, tr transport)) {
	for _, tr := range transports {
		t.Run(tr.name, func(t *testing.T) { fn(t, tr) })
	}
}

func TestToolsListedPerCredential(t *testing.T) {
	e := testenv.Start(t)
	all := []string{"answer_question", "ask_human", "create_task", "get_task", "list_conversations", "list_tasks", "post_message", "read_messages", "update_task"}
	cases := []struct {
		name string
		cred cred
		want []string
	}{
		{"agent", agentCred(t, e, "coder"), slices.DeleteFunc(slices.Clone(all), func(s string) bool { return s == "answer_question" })},
		{"every platform scope", tokenCred(e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite)), all},
		{"task:read", tokenCred(e.Token(t, e.Project.ID, auth.TaskRead)), []string{"get_task", "list_tasks"}},
		{"data token", tokenCred(e.TypedToken(t, e.Project.ID, model.TokenData, auth.VectorRead)), []string{"search_knowledge"}},
	}
	each(t, func(t *testing.T, tr transport) {
		for _, c := range cases {
			t.Run(c.name, func(t *testing.T) {
				if got := toolNames(t, tr.connect(t, e, c.cred)); !slices.Equal(got, c.want) {
					t.Errorf("tools = %v, want %v", got, c.want)
				}
			})
		}
	})
}

func TestCreateAndUpdateTask(t *testing.T) {
	e := testenv.Start(t)
	agent := agentCred(t, e, "coder")
	each(t, func(t *testing.T, tr transport) {
		s := tr.connect(t, e, agent)
		var task model.Task
		call(t, s, "create_task", map[string]any{"summary": "Migrate the schema", "steps": []string{"dump", "load"}, "assign_to_me": true}, &task)
		if task.Status != model.StatusTodo || task.AgentName != "coder" || task.Source != model.SourceAgent || len(task.Steps) != 2 {
			t.Fatalf("created %+v", task)
		}
		call(t, s, "update_task", map[string]any{"task_id": task.ID, "status": "Doing",
			"steps": []map[string]any{{"index": 0, "status": "completed"}}, "message": "dumped 3 tables"}, &task)
		got, err := e.Service.GetTask(context.Background(), auth.Owner(e.Project.ID), task.ID)
		if err != nil {
			t.Fatal(err)
		}
		if got.Status != model.StatusDoing || got.Steps[0].Status != model.StepCompleted || got.Steps[1].Status != model.StepPending ||
			len(got.Conversation) != 1 || got.Conversation[0].Content != "dumped 3 tables" || got.Conversation[0].Role != model.RoleAssistant {
			t.Errorf("after update_task: %+v", got)
		}
	})
}

// waitingTask waits for a task of the project to wait on the question, and returns it.
func waitingTask(t *testing.T, e *testenv.Env, question string) *model.Task {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		tasks, _, err := e.Service.ListTasks(context.Background(), auth.Owner(e.Project.ID), service.ListTasksInput{Status: model.StatusWaiting})
		if err != nil {
			t.Fatal(err)
		}
		for _, task := range tasks {
			if task.WaitingDetails != nil && *task.WaitingDetails == question {
				return &task
			}
		}
	}
	t.Fatalf("no task waits on %q", question)
	return nil
}

func TestAskHumanAnsweredWhileItWaits(t *testing.T) {
	e := testenv.Start(t)
	agent := agentCred(t, e, "coder")
	person := e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite)
	each(t, func(t *testing.T, tr transport) {
		s := tr.connect(t, e, agent)
		question := "May I drop the legacy table? (" + tr.name + ")"
		done := make(chan *sdk.CallToolResult, 1)
		go func() {
			res, err := s.CallTool(context.Background(), withProgress(&sdk.CallToolParams{Name: "ask_human",
				Arguments: map[string]any{"question": question, "wait_seconds": 30}}, "ask-1"))
			if err != nil {
				t.Errorf("ask_human: %v", err)
			}
			done <- res
		}()
		task := waitingTask(t, e, question)
		if task.AgentName != "coder" {
			t.Errorf("the question's task is assigned to %q, want the asking agent", task.AgentName)
		}
		select {
		case p := <-s.progress:
			if p.ProgressToken != "ask-1" || p.Total != 30 {
				t.Errorf("progress %+v", p)
			}
		case <-time.After(10 * time.Second):
			t.Error("no progress notification while waiting")
		}
		resp := e.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/respond", task.ID), Token: person,
			Body: map[string]any{"response": "Yes, it is unused."}})
		if resp.Status != http.StatusOK {
			t.Fatalf("respond: %d %s", resp.Status, resp.Body)
		}
		var res *sdk.CallToolResult
		select {
		case res = <-done:
		case <-time.After(10 * time.Second):
			t.Fatal("ask_human did not return the answer")
		}
		var got mcp.Answered
		raw, _ := json.Marshal(res.StructuredContent)
		json.Unmarshal(raw, &got)
		if res.IsError || got != (mcp.Answered{Status: "answered", Answer: "Yes, it is unused.", TaskID: task.ID}) {
			t.Errorf("ask_human = %+v (%s)", got, text(res))
		}
	})
}

func withProgress(p *sdk.CallToolParams, token any) *sdk.CallToolParams {
	p.SetProgressToken(token)
	return p
}

func TestAskHumanTwiceWaitsOnOneQuestion(t *testing.T) {
	e := testenv.Start(t)
	each(t, func(t *testing.T, tr transport) {
		s := tr.connect(t, e, tokenCred(e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite)))
		question := "Which region? (" + tr.name + ")"
		var first, second mcp.Waiting
		call(t, s, "ask_human", map[string]any{"question": question, "wait_seconds": 1}, &first)
		if first.Status != "waiting" || first.TaskID == 0 {
			t.Fatalf("first ask = %+v, want waiting with a task", first)
		}
		asked := waitingTask(t, e, question)
		if asked.ID != first.TaskID || asked.AgentID != nil {
			t.Errorf("a token's question: task %+v, want task %d assigned to no one", asked, first.TaskID)
		}
		call(t, s, "ask_human", map[string]any{"question": question, "task_id": first.TaskID, "wait_seconds": 1}, &second)
		if second != first {
			t.Errorf("second ask = %+v, want %+v", second, first)
		}
		again := waitingTask(t, e, question)
		if again.WaitingVersion != asked.WaitingVersion {
			t.Errorf("asking again made a new question: waiting_version %d, then %d", asked.WaitingVersion, again.WaitingVersion)
		}
		tasks, _, _ := e.Service.ListTasks(context.Background(), auth.Owner(e.Project.ID), service.ListTasksInput{Query: "region"})
		if n := len(tasks); n != 1 {
			t.Errorf("%d tasks ask the question, want 1", n)
		}
		e.Service.DeleteTask(context.Background(), auth.Owner(e.Project.ID), first.TaskID, nil)
	})
}

func TestResourceSubscriptionNotified(t *testing.T) {
	e := testenv.Start(t)
	token := e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite)
	each(t, func(t *testing.T, tr transport) {
		s := tr.connect(t, e, tokenCred(token))
		task, err := e.Service.CreateTask(context.Background(), auth.Owner(e.Project.ID), service.CreateTaskInput{Summary: "Watch me"}, "")
		if err != nil {
			t.Fatal(err)
		}
		uri := mcp.TaskURI(task.ID)
		read, err := s.ReadResource(context.Background(), &sdk.ReadResourceParams{URI: uri})
		if err != nil || len(read.Contents) != 1 || !strings.Contains(read.Contents[0].Text, `"summary": "Watch me"`) {
			t.Fatalf("read %s: %v %+v", uri, err, read)
		}
		if err := s.Subscribe(context.Background(), &sdk.SubscribeParams{URI: uri}); err != nil {
			t.Fatalf("subscribe: %v", err)
		}
		time.Sleep(200 * time.Millisecond) // the feed opens after the subscription's answer
		if _, err := e.Service.SetTaskStatus(context.Background(), auth.Owner(e.Project.ID), task.ID, model.StatusDoing, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		select {
		case got := <-s.updated:
			if got != uri {
				t.Errorf("updated %s, want %s", got, uri)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no notifications/resources/updated after the task changed")
		}
	})
}

func TestToolErrorCarriesRESTMessage(t *testing.T) {
	e := testenv.Start(t)
	token := e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite)
	rest := e.Do(t, testenv.Request{Method: "GET", Path: "/api/tasks/424242", Token: token})
	var body struct{ Error struct{ Message string } }
	rest.JSON(t, &body)
	each(t, func(t *testing.T, tr transport) {
		s := tr.connect(t, e, tokenCred(token))
		res := callResult(t, s, "get_task", map[string]any{"task_id": 424242}, nil)
		if !res.IsError || text(res) != body.Error.Message {
			t.Errorf("get_task of a missing task: isError %v, %q; want the REST message %q", res.IsError, text(res), body.Error.Message)
		}
		res = callResult(t, s, "update_task", map[string]any{"task_id": 424242, "status": "Sleeping"}, nil)
		if !res.IsError || !strings.Contains(text(res), "Sleeping") {
			t.Errorf("update_task to a bad status: isError %v, %q", res.IsError, text(res))
		}
	})
}

func TestHTTPWithoutCredentials(t *testing.T) {
	e := testenv.Start(t)
	init := `{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`
	for _, c := range []struct{ name, auth string }{{"none", ""}, {"wrong token", "Bearer adk_wrongwrongwrongwrongwrongwrongwrong"}} {
		h := http.Header{"Accept": {"application/json, text/event-stream"}}
		if c.auth != "" {
			h.Set("Authorization", c.auth)
		}
		resp := e.Do(t, testenv.Request{Method: "POST", Path: "/mcp", Body: init, Header: h})
		if resp.Status != http.StatusUnauthorized || !strings.HasPrefix(resp.Header.Get("WWW-Authenticate"), "Bearer") {
			t.Errorf("%s: %d, WWW-Authenticate %q; want 401 with Bearer", c.name, resp.Status, resp.Header.Get("WWW-Authenticate"))
		}
	}
}

func TestHTTPSessionAnswersOnlyItsCaller(t *testing.T) {
	e := testenv.Start(t)
	s := connectHTTP(t, e, tokenCred(e.Token(t, e.Project.ID, auth.TaskRead)))
	other := e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite)
	list := `{"jsonrpc":"2.0","id":2,"method":"tools/list"}`
	resp := e.Do(t, testenv.Request{Method: "POST", Path: "/mcp", Token: other, Body: list, Header: http.Header{
		"Accept": {"application/json, text/event-stream"}, "Mcp-Session-Id": {s.ID()}, "Mcp-Protocol-Version": {"2025-06-18"}}})
	if resp.Status != http.StatusNotFound {
		t.Errorf("another token on the session: %d %s, want 404", resp.Status, resp.Body)
	}
}

func TestStdioWithoutServer(t *testing.T) {
	cmd := exec.Command(binary, "mcp")
	cmd.Env = append(os.Environ(), "AGENTDESK_URL=", "AGENTDESK_DATA="+t.TempDir(), "AGENTDESK_TOKEN=adk_x")
	out, err := cmd.CombinedOutput()
	if err == nil || !strings.Contains(string(out), "no agentdesk server is running on") {
		t.Errorf("agentdesk mcp without a server: %v, %q", err, out)
	}
}

// TestToolSchemasHaveOneTypeEach: every property of every input schema has one JSON type.
// jsonschema.For alone gives slices and pointers ["null", T] and an `any` field no type,
// which clients mapping tool schemas onto a one-type dialect (Gemini's function
// declarations) refuse; the MCP Inspector's --strict warns about them.
func TestToolSchemasHaveOneTypeEach(t *testing.T) {
	e := testenv.Start(t)
	var tools []*sdk.Tool
	for _, c := range []cred{
		tokenCred(e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite)),
		tokenCred(e.TypedToken(t, e.Project.ID, model.TokenData, auth.VectorRead)),
	} {
		res, err := connectHTTP(t, e, c).ListTools(context.Background(), nil)
		if err != nil {
			t.Fatal(err)
		}
		tools = append(tools, res.Tools...)
	}
	var check func(tool, path string, schema map[string]any)
	check = func(tool, path string, schema map[string]any) {
		if _, ok := schema["type"].(string); !ok {
			t.Errorf("%s: %s has type %v, want one type", tool, path, schema["type"])
		}
		props, _ := schema["properties"].(map[string]any)
		for name, p := range props {
			check(tool, path+"."+name, p.(map[string]any))
		}
		if items, ok := schema["items"].(map[string]any); ok {
			check(tool, path+"[]", items)
		}
	}
	for _, tool := range tools {
		raw, _ := json.Marshal(tool.InputSchema)
		var schema map[string]any
		json.Unmarshal(raw, &schema)
		check(tool.Name, "input", schema)
	}
	if len(tools) != 10 {
		t.Errorf("%d tools checked, want the 10 of the contract", len(tools))
	}
}

// TestAskHumanWithAForm: ask_human's options, schema, deadline and person asked reach
// the task; a form's answer comes back with its data.
func TestAskHumanWithAForm(t *testing.T) {
	e := testenv.Start(t)
	agent := agentCred(t, e, "coder")
	person := e.Token(t, e.Project.ID, auth.TaskRead, auth.TaskWrite)
	s := transports[0].connect(t, e, agent)
	at := time.Now().Add(time.Hour).UTC().Truncate(time.Second)
	if res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask_human",
		Arguments: map[string]any{"question": "Pick", "options": []string{"a", "a"}, "wait_seconds": 0}}); err != nil || !res.IsError || !strings.Contains(text(res), "there twice") {
		t.Fatalf("an option twice: %v %s", err, text(res))
	}
	question := "How many seats?"
	done := make(chan *sdk.CallToolResult, 1)
	go func() {
		res, err := s.CallTool(context.Background(), &sdk.CallToolParams{Name: "ask_human", Arguments: map[string]any{
			"question": question, "wait_seconds": 30, "ask": "dana@example.com", "expires_at": at.Format(time.RFC3339), "on_expiry": "fail",
			"schema": map[string]any{"type": "object", "properties": map[string]any{"seats": map[string]any{"type": "integer", "minimum": 1}}, "required": []string{"seats"}}}})
		if err != nil {
			t.Errorf("ask_human: %v", err)
		}
		done <- res
	}()
	task := waitingTask(t, e, question)
	if task.WaitingSchema == nil || !task.WaitingExpiresAt.Equal(at) || *task.WaitingAsk != "dana@example.com" || *task.WaitingOnExpiry != "fail" {
		t.Fatalf("the question's task: %+v", task)
	}
	resp := e.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/respond", task.ID), Token: person,
		Body: map[string]any{"data": map[string]any{"seats": 3}}})
	if resp.Status != http.StatusOK {
		t.Fatalf("respond: %d %s", resp.Status, resp.Body)
	}
	var res *sdk.CallToolResult
	select {
	case res = <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("ask_human did not return the answer")
	}
	var got struct {
		Status, Answer string
		Data           map[string]any
	}
	raw, _ := json.Marshal(res.StructuredContent)
	json.Unmarshal(raw, &got)
	if res.IsError || got.Status != "answered" || got.Answer != "seats: 3" || got.Data["seats"] != float64(3) {
		t.Fatalf("ask_human = %+v (%s)", got, text(res))
	}
}
