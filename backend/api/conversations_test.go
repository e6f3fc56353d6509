package api_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"slices"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// convFixture is a server with a project holding a conversation (with a message, a
// document and a linked task), tokens of every scope mix, an agent, and a second
// project with a conversation of its own.
type convFixture struct {
	env                    *testenv.Env
	project                string
	all                    string // messaging:read, messaging:write, task:read, task:write
	ro, wo                 string // messaging:read only; messaging:write only
	taskOnly               string // task:read only
	msgOnly                string // messaging:read and messaging:write, no task scope
	agent                  *model.Agent
	conv                   model.Conversation
	doc                    model.Document
	task                   model.Task // linked to conv
	second                 model.Conversation
	otherProject, otherTok string
	otherConv              model.Conversation
}

func newConvFixture(t *testing.T, engine string) *convFixture {
	t.Helper()
	env := testenv.StartOn(t, engine)
	f := &convFixture{env: env, project: env.Project.ID}
	f.all = env.Token(t, f.project, "messaging:read", "messaging:write", "task:read", "task:write")
	f.ro = env.Token(t, f.project, "messaging:read")
	f.wo = env.Token(t, f.project, "messaging:write")
	f.taskOnly = env.Token(t, f.project, "task:read")
	f.msgOnly = env.Token(t, f.project, "messaging:read", "messaging:write")
	f.agent = env.Agent(t, f.project, "worker")
	f.conv = f.createConv(t, f.all, f.project, `{"message":"hello","name":"general"}`)
	f.second = f.createConv(t, f.all, f.project, `{"message":"second"}`)
	f.doc = f.upload(t, f.all, f.project, fmt.Sprint(f.conv.ID), "notes.txt", "text/plain", []byte("some notes"), http.StatusCreated)
	r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: f.all,
		Body: fmt.Sprintf(`{"summary":"linked task","conversation_id":%q}`, f.conv.UUID)})
	if r.Status != http.StatusCreated {
		t.Fatalf("create linked task: %d %s", r.Status, r.Body)
	}
	r.JSON(t, &f.task)
	other := env.NewProject(t, "other")
	f.otherProject = other.ID
	f.otherTok = env.Token(t, other.ID, "messaging:read", "messaging:write", "task:read")
	f.otherConv = f.createConv(t, f.otherTok, other.ID, `{"message":"secret"}`)
	return f
}

func (f *convFixture) createConv(t *testing.T, token, project, body string) model.Conversation {
	t.Helper()
	r := f.env.Do(t, testenv.Request{Method: "POST", Path: "/api/projects/" + project + "/conversations", Token: token, Body: body})
	if r.Status != http.StatusCreated {
		t.Fatalf("create conversation: %d %s", r.Status, r.Body)
	}
	var c model.Conversation
	r.JSON(t, &c)
	return c
}

func (f *convFixture) post(t *testing.T, req testenv.Request, want int) *testenv.Response {
	t.Helper()
	r := f.env.Do(t, req)
	if r.Status != want {
		t.Fatalf("%s %s: %d %s, want %d", req.Method, req.Path, r.Status, r.Body, want)
	}
	return r
}

// multipartFile builds a multipart/form-data body with one part.
func multipartFile(t testing.TB, field, filename, contentType string, content []byte) ([]byte, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	h := textproto.MIMEHeader{}
	disp := mime.FormatMediaType("form-data", map[string]string{"name": field, "filename": filename})
	if filename == "" {
		disp = mime.FormatMediaType("form-data", map[string]string{"name": field})
	}
	h.Set("Content-Disposition", disp)
	if contentType != "" {
		h.Set("Content-Type", contentType)
	}
	pw, err := w.CreatePart(h)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := pw.Write(content); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes(), w.FormDataContentType()
}

func (f *convFixture) upload(t *testing.T, token, project, conv, filename, contentType string, content []byte, want int) model.Document {
	t.Helper()
	body, ctype := multipartFile(t, "file", filename, contentType, content)
	r := f.env.Do(t, testenv.Request{Method: "POST", Path: "/api/projects/" + project + "/conversations/" + conv + "/documents",
		Token: token, Body: body, Header: http.Header{"Content-Type": {ctype}}})
	if r.Status != want {
		t.Fatalf("upload: %d %s, want %d", r.Status, r.Body, want)
	}
	var d model.Document
	if want == http.StatusCreated {
		r.JSON(t, &d)
	}
	return d
}

// run sends a scenario. Path placeholders: {project} {otherProject} {conv} {uuid}
// {second} {otherConv} {otherUUID} {doc}. Tokens: all, ro, wo, task, msg, other, agent
// (agent headers), badagent.
func (f *convFixture) run(t *testing.T, sc scenario) *testenv.Response {
	t.Helper()
	fill := strings.NewReplacer("{project}", f.project, "{otherProject}", f.otherProject,
		"{conv}", fmt.Sprint(f.conv.ID), "{uuid}", f.conv.UUID, "{second}", fmt.Sprint(f.second.ID),
		"{otherConv}", fmt.Sprint(f.otherConv.ID), "{otherUUID}", f.otherConv.UUID, "{doc}", fmt.Sprint(f.doc.ID))
	path := fill.Replace(sc.path)
	req := testenv.Request{Method: sc.method, Path: path, Header: http.Header{}}
	if sc.body != "" {
		req.Body = fill.Replace(sc.body)
	}
	switch sc.token {
	case "all":
		req.Token = f.all
	case "ro":
		req.Token = f.ro
	case "wo":
		req.Token = f.wo
	case "task":
		req.Token = f.taskOnly
	case "msg":
		req.Token = f.msgOnly
	case "other":
		req.Token = f.otherTok
	case "agent":
		req.Header = f.env.AgentHeaders(t, f.project, "worker")
	case "badagent":
		req.Header = f.env.AgentHeaders(t, f.project, "worker")
		req.Header.Set("X-Task-Authorization", strings.Repeat("0", 40))
	case "none", "":
	default:
		req.Header.Set("Authorization", strings.TrimPrefix(sc.token, "raw:"))
	}
	return sc.send(t, f.env, req, fill)
}

// TestConversationEndpoints covers every Conversations endpoint with its errors. The
// fixture is shared; scenarios that write only add.
func TestConversationEndpoints(t *testing.T) { pgtest.Engines(t, testConversationEndpoints) }

func testConversationEndpoints(t *testing.T, engine string) {
	f := newConvFixture(t, engine)
	const base = "/api/projects/{project}/conversations"
	long := strings.Repeat("x", service.MaxMessageLen+1)
	scenarios := []scenario{
		// POST /conversations
		{name: "create", method: "POST", path: base, token: "wo", body: `{"message":"hi"}`, status: 201,
			contains: []string{`"name":null`, `"participants":["test"]`, `"uuid":"`, `"projectId":"{project}"`, `"createdAt":"`}},
		{name: "create named", method: "POST", path: base, token: "wo", body: `{"message":"hi","name":"plans"}`, status: 201, contains: []string{`"name":"plans"`}},
		{name: "create with content", method: "POST", path: base, token: "wo", body: `{"content":"hi"}`, status: 201},
		{name: "create with both the same", method: "POST", path: base, token: "wo", body: `{"message":"hi","content":"hi"}`, status: 201},
		{name: "create with both differing", method: "POST", path: base, token: "wo", body: `{"message":"hi","content":"ho"}`, status: 400, code: "invalid_argument"},
		{name: "create longest message", method: "POST", path: base, token: "wo", body: `{"message":"` + long[1:] + `"}`, status: 201},
		{name: "create by agent", method: "POST", path: base, token: "agent", body: `{"message":"hi"}`, status: 201, contains: []string{`"participants":["worker"]`}},
		{name: "create unknown fields ignored", method: "POST", path: base, token: "wo", body: `{"message":"hi","colour":1}`, status: 201},
		{name: "create missing message", method: "POST", path: base, token: "wo", body: `{"name":"x"}`, status: 400, code: "invalid_argument", contains: []string{"message"}},
		{name: "create null message", method: "POST", path: base, token: "wo", body: `{"message":null}`, status: 400, code: "invalid_argument"},
		{name: "create blank message", method: "POST", path: base, token: "wo", body: `{"message":"  "}`, status: 400, code: "invalid_argument"},
		{name: "create message wrong type", method: "POST", path: base, token: "wo", body: `{"message":5}`, status: 400, code: "invalid_argument", contains: []string{"message"}},
		{name: "create malformed JSON", method: "POST", path: base, token: "wo", body: `{"message":`, status: 400, code: "invalid_argument"},
		{name: "create not an object", method: "POST", path: base, token: "wo", body: `["hi"]`, status: 400, code: "invalid_argument"},
		{name: "create empty body", method: "POST", path: base, token: "wo", status: 400, code: "invalid_argument"},
		{name: "create message too long", method: "POST", path: base, token: "wo", body: `{"message":"` + long + `"}`, status: 400, code: "invalid_argument"},
		{name: "create name too long", method: "POST", path: base, token: "wo", body: `{"message":"hi","name":"` + strings.Repeat("n", 201) + `"}`, status: 400, code: "invalid_argument"},
		{name: "create huge body", method: "POST", path: base, token: "wo", body: `{"message":"` + strings.Repeat("x", 1<<20) + `"}`, status: 413, code: "payload_too_large"},
		{name: "create bad idempotency key", method: "POST", path: base, token: "wo", body: `{"message":"hi"}`, header: map[string]string{"Idempotency-Key": "a b"}, status: 400, code: "invalid_argument"},
		{name: "create read-only", method: "POST", path: base, token: "ro", body: `{"message":"hi"}`, status: 403, code: "forbidden", contains: []string{"messaging:write"}},
		{name: "create task token", method: "POST", path: base, token: "task", body: `{"message":"hi"}`, status: 403, code: "forbidden"},
		{name: "create no credentials", method: "POST", path: base, token: "none", body: `{"message":"hi"}`, status: 401, code: "unauthenticated"},
		{name: "create wrong token", method: "POST", path: base, token: "raw:Bearer adk_0000000000000000000000000000000000000000", body: `{"message":"hi"}`, status: 401, code: "unauthenticated"},
		{name: "create wrong agent digest", method: "POST", path: base, token: "badagent", body: `{"message":"hi"}`, status: 401, code: "unauthenticated"},
		{name: "create in another project", method: "POST", path: "/api/projects/{otherProject}/conversations", token: "wo", body: `{"message":"hi"}`, status: 404, code: "not_found"},

		// GET /conversations
		{name: "list", method: "GET", path: base, token: "ro", status: 200, contains: []string{`"name":"general"`, `"uuid":"{uuid}"`}},
		{name: "list by agent", method: "GET", path: base, token: "agent", status: 200, contains: []string{`"name":"general"`}},
		{name: "list paged", method: "GET", path: base + "?limit=1", token: "ro", status: 200, contains: []string{`"name":"general"`}},
		{name: "list bad limit", method: "GET", path: base + "?limit=0", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list bad after_id", method: "GET", path: base + "?after_id=x", token: "ro", status: 400, code: "invalid_argument"},
		{name: "list write-only", method: "GET", path: base, token: "wo", status: 403, code: "forbidden", contains: []string{"messaging:read"}},
		{name: "list no credentials", method: "GET", path: base, token: "none", status: 401, code: "unauthenticated"},
		{name: "list another project", method: "GET", path: "/api/projects/{otherProject}/conversations", token: "ro", status: 404, code: "not_found"},

		// GET /conversations/{id}
		{name: "get by id", method: "GET", path: base + "/{conv}", token: "ro", status: 200, contains: []string{`"name":"general"`}},
		{name: "get by uuid", method: "GET", path: base + "/{uuid}", token: "ro", status: 200, contains: []string{`"id":{conv}`}},
		{name: "get unknown", method: "GET", path: base + "/999999", token: "ro", status: 404, code: "not_found"},
		{name: "get of another project", method: "GET", path: base + "/{otherConv}", token: "ro", status: 404, code: "not_found"},
		{name: "get write-only", method: "GET", path: base + "/{conv}", token: "wo", status: 403, code: "forbidden"},

		// POST /conversations/{id}/messages
		{name: "post", method: "POST", path: base + "/{conv}/messages", token: "wo", body: `{"message":"more"}`, status: 201,
			contains: []string{`"conversationId":{conv}`, `"author":"test"`, `"authorType":"user"`, `"content":"more"`, `"reactions":[]`}},
		{name: "post by uuid", method: "POST", path: base + "/{uuid}/messages", token: "wo", body: `{"message":"more"}`, status: 201, contains: []string{`"conversationId":{conv}`}},
		{name: "post content", method: "POST", path: base + "/{conv}/messages", token: "wo", body: `{"content":"via content"}`, status: 201, contains: []string{`"content":"via content"`}},
		{name: "post by agent", method: "POST", path: base + "/{conv}/messages", token: "agent", body: `{"message":"done"}`, status: 201,
			contains: []string{`"author":"worker"`, `"authorType":"agent"`}},
		{name: "post missing message", method: "POST", path: base + "/{conv}/messages", token: "wo", body: `{}`, status: 400, code: "invalid_argument", contains: []string{"message"}},
		{name: "post malformed JSON", method: "POST", path: base + "/{conv}/messages", token: "wo", body: `{"message"`, status: 400, code: "invalid_argument"},
		{name: "post too long", method: "POST", path: base + "/{conv}/messages", token: "wo", body: `{"message":"` + long + `"}`, status: 400, code: "invalid_argument"},
		{name: "post unknown conversation", method: "POST", path: base + "/999999/messages", token: "wo", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "post unknown uuid", method: "POST", path: base + "/00000000-0000-4000-8000-000000000000/messages", token: "wo", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "post conversation of another project", method: "POST", path: base + "/{otherConv}/messages", token: "wo", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "post uuid of another project", method: "POST", path: base + "/{otherUUID}/messages", token: "wo", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "post via another project's path", method: "POST", path: "/api/projects/{otherProject}/conversations/{otherConv}/messages", token: "wo", body: `{"message":"x"}`, status: 404, code: "not_found"},
		{name: "post read-only", method: "POST", path: base + "/{conv}/messages", token: "ro", body: `{"message":"x"}`, status: 403, code: "forbidden"},
		{name: "post no credentials", method: "POST", path: base + "/{conv}/messages", token: "none", body: `{"message":"x"}`, status: 401, code: "unauthenticated"},

		// GET /conversations/{id}/messages
		{name: "messages", method: "GET", path: base + "/{conv}/messages", token: "ro", status: 200, contains: []string{`"content":"hello"`, `"authorType":"user"`}},
		{name: "messages by uuid", method: "GET", path: base + "/{uuid}/messages", token: "ro", status: 200, contains: []string{`"content":"hello"`}},
		{name: "messages by agent", method: "GET", path: base + "/{conv}/messages", token: "agent", status: 200, contains: []string{`"content":"hello"`}},
		{name: "messages unknown", method: "GET", path: base + "/424242/messages", token: "ro", status: 404, code: "not_found"},
		{name: "messages of another project", method: "GET", path: base + "/{otherUUID}/messages", token: "ro", status: 404, code: "not_found"},
		{name: "messages bad limit", method: "GET", path: base + "/{conv}/messages?limit=abc", token: "ro", status: 400, code: "invalid_argument"},
		{name: "messages negative after_id", method: "GET", path: base + "/{conv}/messages?after_id=-1", token: "ro", status: 400, code: "invalid_argument"},
		{name: "messages write-only", method: "GET", path: base + "/{conv}/messages", token: "wo", status: 403, code: "forbidden"},
		{name: "messages task token", method: "GET", path: base + "/{conv}/messages", token: "task", status: 403, code: "forbidden"},
		{name: "messages no credentials", method: "GET", path: base + "/{conv}/messages", token: "none", status: 401, code: "unauthenticated"},

		// GET /conversations/{id}/tasks
		{name: "tasks", method: "GET", path: base + "/{conv}/tasks", token: "all", status: 200, contains: []string{`"summary":"linked task"`, `"conversation_id":{conv}`}},
		{name: "tasks by uuid", method: "GET", path: base + "/{uuid}/tasks", token: "all", status: 200, contains: []string{`"summary":"linked task"`}},
		{name: "tasks of an unlinked conversation", method: "GET", path: base + "/{second}/tasks", token: "all", status: 200, contains: []string{`[]`}},
		{name: "tasks without task:read", method: "GET", path: base + "/{conv}/tasks", token: "msg", status: 403, code: "forbidden", contains: []string{"task:read"}},
		{name: "tasks without messaging:read", method: "GET", path: base + "/{conv}/tasks", token: "task", status: 403, code: "forbidden", contains: []string{"messaging:read"}},
		{name: "tasks unknown", method: "GET", path: base + "/777/tasks", token: "all", status: 404, code: "not_found"},
		{name: "tasks of another project", method: "GET", path: base + "/{otherConv}/tasks", token: "all", status: 404, code: "not_found"},
		{name: "tasks no credentials", method: "GET", path: base + "/{conv}/tasks", token: "none", status: 401, code: "unauthenticated"},

		// documents
		{name: "documents", method: "GET", path: base + "/{conv}/documents", token: "ro", status: 200,
			contains: []string{`"name":"notes.txt"`, `"mimeType":"text/plain`, `"size":10`, `"url":"/api/projects/{project}/conversations/{conv}/documents/{doc}"`}},
		{name: "documents by uuid", method: "GET", path: base + "/{uuid}/documents", token: "agent", status: 200, contains: []string{`"name":"notes.txt"`}},
		{name: "documents of an empty conversation", method: "GET", path: base + "/{second}/documents", token: "ro", status: 200, contains: []string{`[]`}},
		{name: "documents unknown", method: "GET", path: base + "/555/documents", token: "ro", status: 404, code: "not_found"},
		{name: "documents write-only", method: "GET", path: base + "/{conv}/documents", token: "wo", status: 403, code: "forbidden"},
		{name: "documents no credentials", method: "GET", path: base + "/{conv}/documents", token: "none", status: 401, code: "unauthenticated"},
		{name: "download", method: "GET", path: base + "/{conv}/documents/{doc}", token: "ro", status: 200, contains: []string{"some notes"}},
		{name: "download by uuid", method: "GET", path: base + "/{uuid}/documents/{doc}", token: "ro", status: 200, contains: []string{"some notes"}},
		{name: "download unknown", method: "GET", path: base + "/{conv}/documents/999999", token: "ro", status: 404, code: "not_found"},
		{name: "download via another conversation", method: "GET", path: base + "/{second}/documents/{doc}", token: "ro", status: 404, code: "not_found"},
		{name: "download non-integer id", method: "GET", path: base + "/{conv}/documents/abc", token: "ro", status: 400, code: "invalid_argument"},
		{name: "download write-only", method: "GET", path: base + "/{conv}/documents/{doc}", token: "wo", status: 403, code: "forbidden"},
		{name: "download from another project", method: "GET", path: "/api/projects/{otherProject}/conversations/{conv}/documents/{doc}", token: "other", status: 404, code: "not_found"},
		{name: "upload JSON", method: "POST", path: base + "/{conv}/documents", token: "wo", body: `{"file":"x"}`, status: 400, code: "invalid_argument", contains: []string{"multipart"}},
		{name: "upload no credentials", method: "POST", path: base + "/{conv}/documents", token: "none", body: `{}`, status: 401, code: "unauthenticated"},
	}
	for _, sc := range scenarios {
		t.Run(sc.name, func(t *testing.T) { f.run(t, sc) })
	}
}

// TestConversationUploadErrors: uploads without a file part, with a missing scope, to
// an unknown conversation, and over 25 MiB.
func TestConversationUploadErrors(t *testing.T) { pgtest.Engines(t, testConversationUploadErrors) }

func testConversationUploadErrors(t *testing.T, engine string) {
	f := newConvFixture(t, engine)
	path := "/api/projects/" + f.project + "/conversations/" + fmt.Sprint(f.conv.ID) + "/documents"
	send := func(token string, body []byte, ctype string) *testenv.Response {
		return f.env.Do(t, testenv.Request{Method: "POST", Path: path, Token: token, Body: body, Header: http.Header{"Content-Type": {ctype}}})
	}
	expect := func(r *testenv.Response, status int, code string) {
		t.Helper()
		if r.Status != status || r.ErrorCode() != code {
			t.Fatalf("status %d %s, want %d %s", r.Status, r.Body, status, code)
		}
	}

	body, ctype := multipartFile(t, "attachment", "a.txt", "text/plain", []byte("x"))
	expect(send(f.wo, body, ctype), http.StatusBadRequest, "invalid_argument")
	body, ctype = multipartFile(t, "file", "a.txt", "text/plain", []byte("x"))
	expect(send(f.ro, body, ctype), http.StatusForbidden, "forbidden")
	expect(send(f.wo, []byte("--nope\r\njunk"), "multipart/form-data; boundary=nope"), http.StatusBadRequest, "invalid_argument")
	expect(f.env.Do(t, testenv.Request{Method: "POST", Path: "/api/projects/" + f.project + "/conversations/31337/documents",
		Token: f.wo, Body: body, Header: http.Header{"Content-Type": {ctype}}}), http.StatusNotFound, "not_found")

	// One byte over 25 MiB: the document part is read and refused.
	big := make([]byte, service.MaxDocumentSize+1)
	body, ctype = multipartFile(t, "file", "big.bin", "application/octet-stream", big)
	expect(send(f.wo, body, ctype), http.StatusRequestEntityTooLarge, "payload_too_large")
	// Far over: refused by its Content-Length before reading.
	body, ctype = multipartFile(t, "file", "bigger.bin", "application/octet-stream", make([]byte, service.MaxDocumentSize+2<<20))
	expect(send(f.wo, body, ctype), http.StatusRequestEntityTooLarge, "payload_too_large")

	// Nothing of the refused uploads was stored.
	r := f.env.Do(t, testenv.Request{Method: "GET", Path: path, Token: f.ro})
	var docs []model.Document
	r.JSON(t, &docs)
	if len(docs) != 1 {
		t.Fatalf("documents after refused uploads: %s", r.Body)
	}
}

// TestConversationDocumentRoundTrip: bytes come back exactly, with the stored type and
// a safely quoted attachment name; the list describes each document.
func TestConversationDocumentRoundTrip(t *testing.T) {
	pgtest.Engines(t, testConversationDocumentRoundTrip)
}

func testConversationDocumentRoundTrip(t *testing.T, engine string) {
	f := newConvFixture(t, engine)
	ref := f.conv.UUID
	content := make([]byte, 300_000)
	if _, err := rand.Read(content); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, ctype      string
		storedName       string
		wantType         string
		agent            bool
		expectFilenameEx bool
	}{
		{name: "report.pdf", ctype: "application/pdf", storedName: "report.pdf", wantType: "application/pdf"},
		{name: `we"ird\..\name;.bin`, ctype: "", storedName: `name;.bin`, wantType: "application/octet-stream"},
		{name: "résumé.txt", ctype: "text/plain; charset=utf-8", storedName: "résumé.txt", wantType: "text/plain; charset=utf-8", expectFilenameEx: true},
		{name: "\u202egnp.exe", ctype: "image/png", storedName: "gnp.exe", wantType: "image/png", agent: true},
	}
	for _, tc := range cases {
		body, ctype := multipartFile(t, "file", tc.name, tc.ctype, content)
		req := testenv.Request{Method: "POST", Path: "/api/projects/" + f.project + "/conversations/" + ref + "/documents",
			Body: body, Header: http.Header{}}
		if tc.agent {
			req.Header = f.env.AgentHeaders(t, f.project, "worker")
		} else {
			req.Token = f.wo
		}
		req.Header.Set("Content-Type", ctype)
		r := f.post(t, req, http.StatusCreated)
		var doc model.Document
		r.JSON(t, &doc)
		if doc.Name != tc.storedName || doc.MimeType != tc.wantType || doc.Size != int64(len(content)) || doc.ConversationID != f.conv.ID {
			t.Fatalf("uploaded %q: %s", tc.name, r.Body)
		}
		if doc.CreatedAt.IsZero() || doc.CreatedAt.Location().String() != "UTC" {
			t.Fatalf("createdAt: %s", r.Body)
		}
		dl := f.env.Do(t, testenv.Request{Method: "GET", Path: doc.URL, Token: f.ro})
		if dl.Status != http.StatusOK || !bytes.Equal(dl.Body, content) {
			t.Fatalf("download %s: %d, %d bytes, want the %d uploaded", doc.URL, dl.Status, len(dl.Body), len(content))
		}
		if got := dl.Header.Get("Content-Type"); got != tc.wantType {
			t.Fatalf("download type %q, want %q", got, tc.wantType)
		}
		if dl.Header.Get("X-Content-Type-Options") != "nosniff" {
			t.Fatal("download without nosniff")
		}
		disp := dl.Header.Get("Content-Disposition")
		kind, params, err := mime.ParseMediaType(disp)
		if err != nil || kind != "attachment" {
			t.Fatalf("Content-Disposition %q: %v", disp, err)
		}
		// mime.ParseMediaType prefers filename* and decodes it.
		if params["filename"] != tc.storedName {
			t.Fatalf("Content-Disposition %q names %q, want %q", disp, params["filename"], tc.storedName)
		}
		if tc.expectFilenameEx != strings.Contains(disp, "filename*=") {
			t.Fatalf("Content-Disposition %q: filename* expected %v", disp, tc.expectFilenameEx)
		}
	}
	r := f.env.Do(t, testenv.Request{Method: "GET", Path: "/api/projects/" + f.project + "/conversations/" + ref + "/documents", Token: f.ro})
	var docs []model.Document
	r.JSON(t, &docs)
	if len(docs) != 1+len(cases) {
		t.Fatalf("documents: %s", r.Body)
	}
	for i, d := range docs {
		if i > 0 && d.ID <= docs[i-1].ID {
			t.Fatalf("documents not oldest first: %s", r.Body)
		}
		if d.URL == "" || d.Name == "" || d.MimeType == "" || d.CreatedAt.IsZero() {
			t.Fatalf("document without its fields: %+v", d)
		}
	}
	// A backup holds the documents' bytes (SQLite's backup; PostgreSQL's is pg_dump).
	if engine == "sqlite" {
		backup := t.TempDir() + "/backup.db"
		if err := f.env.Service.Store().Backup(context.Background(), backup); err != nil {
			t.Fatal(err)
		}
		copyStore, err := store.Open(context.Background(), backup, store.Options{})
		if err != nil {
			t.Fatal(err)
		}
		defer copyStore.Close()
		last := docs[len(docs)-1]
		if _, saved, err := copyStore.Read().DocumentContent(context.Background(), last.ConversationID, last.ID); err != nil || !bytes.Equal(saved, content) {
			t.Fatalf("document in the backup: %d bytes, %v", len(saved), err)
		}
	}

	// The agent that shared a document became a participant.
	r = f.env.Do(t, testenv.Request{Method: "GET", Path: "/api/projects/" + f.project + "/conversations/" + ref, Token: f.ro})
	var conv model.Conversation
	r.JSON(t, &conv)
	if !slices.Contains(conv.Participants, "worker") {
		t.Fatalf("uploader is not a participant: %s", r.Body)
	}
}

// TestConversationMessagesOrderAndPaging: messages come oldest first, agents and users
// alike, and page with limit/after_id and a Link header.
func TestConversationMessagesOrderAndPaging(t *testing.T) {
	pgtest.Engines(t, testConversationMessagesOrderAndPaging)
}

func testConversationMessagesOrderAndPaging(t *testing.T, engine string) {
	f := newConvFixture(t, engine)
	base := "/api/projects/" + f.project + "/conversations/" + fmt.Sprint(f.conv.ID)
	agentHeaders := f.env.AgentHeaders(t, f.project, "worker")
	want := []string{"hello"}
	for i := range 6 {
		text := fmt.Sprintf("m%d", i)
		req := testenv.Request{Method: "POST", Path: base + "/messages", Body: map[string]string{"message": text}}
		if i%2 == 1 {
			req.Header = agentHeaders
		} else {
			req.Token = f.wo
		}
		f.post(t, req, http.StatusCreated)
		want = append(want, text)
	}

	var all []model.Message
	r := f.env.Do(t, testenv.Request{Method: "GET", Path: base + "/messages", Token: f.ro})
	r.JSON(t, &all)
	if r.Header.Get("Link") != "" {
		t.Fatalf("unpaged list has Link %q", r.Header.Get("Link"))
	}
	var got []string
	for i, m := range all {
		got = append(got, m.Content)
		wantType := "user"
		if i > 0 && i%2 == 0 {
			wantType = "agent"
		}
		if m.AuthorType != wantType || m.ConversationID != f.conv.ID || m.CreatedAt.IsZero() {
			t.Fatalf("message %d: %+v, want authorType %s", i, m, wantType)
		}
		if wantType == "agent" && (m.Author != "worker" || m.AgentID == nil || *m.AgentID != f.agent.ID) {
			t.Fatalf("agent message: %+v", m)
		}
		if i > 0 && m.ID <= all[i-1].ID {
			t.Fatal("messages are not oldest first")
		}
	}
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Fatalf("messages %v, want %v", got, want)
	}

	var paged []string
	path := base + "/messages?limit=3"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		r := f.env.Do(t, testenv.Request{Method: "GET", Path: path, Token: f.ro})
		var page []model.Message
		r.JSON(t, &page)
		if len(page) > 3 {
			t.Fatalf("page of %d, limit 3", len(page))
		}
		for _, m := range page {
			paged = append(paged, m.Content)
		}
		path = ""
		if link := r.Header.Get("Link"); link != "" {
			if !strings.HasSuffix(link, `>; rel="next"`) || !strings.Contains(link, "limit=3") || !strings.Contains(link, "after_id=") {
				t.Fatalf("bad Link header %q", link)
			}
			path = link[1:strings.Index(link, ">")]
		}
	}
	if strings.Join(paged, ",") != strings.Join(want, ",") {
		t.Fatalf("pages gave %v, want %v", paged, want)
	}

	// Both posters are participants, in the order they joined.
	r = f.env.Do(t, testenv.Request{Method: "GET", Path: base, Token: f.ro})
	var conv model.Conversation
	r.JSON(t, &conv)
	if strings.Join(conv.Participants, ",") != "test,worker" {
		t.Fatalf("participants %v, want test,worker", conv.Participants)
	}
}

// TestConversationListPaging: conversations come oldest first and page.
func TestConversationListPaging(t *testing.T) { pgtest.Engines(t, testConversationListPaging) }

func testConversationListPaging(t *testing.T, engine string) {
	f := newConvFixture(t, engine)
	base := "/api/projects/" + f.project + "/conversations"
	for i := range 4 {
		f.createConv(t, f.wo, f.project, fmt.Sprintf(`{"message":"c%d","name":"n%d"}`, i, i))
	}
	var names []string
	path := base + "?limit=2"
	for pages := 0; path != ""; pages++ {
		if pages > 5 {
			t.Fatal("paging does not end")
		}
		r := f.env.Do(t, testenv.Request{Method: "GET", Path: path, Token: f.ro})
		var page []model.Conversation
		r.JSON(t, &page)
		for _, c := range page {
			name := "null"
			if c.Name != nil {
				name = *c.Name
			}
			names = append(names, name)
			if len(c.Participants) == 0 {
				t.Fatalf("conversation without participants: %+v", c)
			}
		}
		path = ""
		if link := r.Header.Get("Link"); link != "" {
			path = link[1:strings.Index(link, ">")]
		}
	}
	if got := strings.Join(names, ","); got != "general,null,n0,n1,n2,n3" {
		t.Fatalf("conversations %s, want general,null,n0,n1,n2,n3", got)
	}
}

// TestConversationIdempotency: replays of conversation and message creation return the
// first answer and create nothing; a reused key with another body is a conflict.
func TestConversationIdempotency(t *testing.T) { pgtest.Engines(t, testConversationIdempotency) }

func testConversationIdempotency(t *testing.T, engine string) {
	f := newConvFixture(t, engine)
	base := "/api/projects/" + f.project + "/conversations"
	key := map[string]string{"Idempotency-Key": "conv-1"}
	do := func(path, body string, header map[string]string) *testenv.Response {
		h := http.Header{}
		for k, v := range header {
			h.Set(k, v)
		}
		return f.env.Do(t, testenv.Request{Method: "POST", Path: path, Token: f.wo, Body: body, Header: h})
	}
	first := do(base, `{"message":"once","name":"idem"}`, key)
	again := do(base, `{"name":"idem", "content":"once"}`, key)
	if first.Status != 201 || again.Status != 201 || !bytes.Equal(first.Body, again.Body) {
		t.Fatalf("replay: %d %s / %d %s", first.Status, first.Body, again.Status, again.Body)
	}
	if r := do(base, `{"message":"other"}`, key); r.Status != http.StatusConflict || r.ErrorCode() != "conflict" {
		t.Fatalf("reused key: %d %s", r.Status, r.Body)
	}
	var conv model.Conversation
	first.JSON(t, &conv)
	r := f.env.Do(t, testenv.Request{Method: "GET", Path: base, Token: f.ro})
	var convs []model.Conversation
	r.JSON(t, &convs)
	n := 0
	for _, c := range convs {
		if c.Name != nil && *c.Name == "idem" {
			n++
		}
	}
	if n != 1 {
		t.Fatalf("%d conversations named idem, want 1", n)
	}

	msgs := base + "/" + conv.UUID + "/messages"
	mkey := map[string]string{"Idempotency-Key": "msg-1"}
	m1 := do(msgs, `{"message":"twice?"}`, mkey)
	m2 := do(base+"/"+fmt.Sprint(conv.ID)+"/messages", `{"message":"twice?"}`, mkey)
	if m1.Status != 201 || m2.Status != 201 || !bytes.Equal(m1.Body, m2.Body) {
		t.Fatalf("message replay: %d %s / %d %s", m1.Status, m1.Body, m2.Status, m2.Body)
	}
	if r := do(msgs, `{"message":"different"}`, mkey); r.Status != http.StatusConflict {
		t.Fatalf("reused message key: %d %s", r.Status, r.Body)
	}
	if r := do(base+"/"+fmt.Sprint(f.second.ID)+"/messages", `{"message":"twice?"}`, mkey); r.Status != http.StatusConflict {
		t.Fatalf("message key reused on another conversation: %d %s", r.Status, r.Body)
	}
	r = f.env.Do(t, testenv.Request{Method: "GET", Path: msgs, Token: f.ro})
	var list []model.Message
	r.JSON(t, &list)
	if len(list) != 2 {
		t.Fatalf("messages after replays: %s", r.Body)
	}
}

// TestConversationEvents: each change wrote its event row in the same transaction.
func TestConversationEvents(t *testing.T) { pgtest.Engines(t, testConversationEvents) }

func testConversationEvents(t *testing.T, engine string) {
	f := newConvFixture(t, engine)
	f.post(t, testenv.Request{Method: "POST", Path: "/api/projects/" + f.project + "/conversations/" + fmt.Sprint(f.conv.ID) + "/messages",
		Header: f.env.AgentHeaders(t, f.project, "worker"), Body: `{"message":"agent here"}`}, http.StatusCreated)
	events, err := f.env.Service.Store().Read().EventsSince(context.Background(), f.project, 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, e := range events {
		count[e.Type]++
	}
	// Two conversations (each with its first message), one document, one agent message
	// (the agent joining first).
	want := map[string]int{"conversation.created": 2, "message.created": 3, "document.created": 1, "participant.added": 1}
	for typ, n := range want {
		if count[typ] != n {
			t.Fatalf("%d %s events, want %d (all: %v)", count[typ], typ, n, count)
		}
	}
}
