package api_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/api"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// oaReq says what the document must think of a scenario's request.
type oaReq int

const (
	oaValid     oaReq = iota // the document must accept the request (it may still fail for a reason the document cannot express)
	oaInvalid                // the document must reject it (bad input, missing or insufficient credentials)
	oaUnchecked              // not checked: the document's verdict is beside the point (the 1 MiB byte limit of JSON bodies)
)

// oaCase is one real request and the answer it must get.
type oaCase struct {
	name   string
	method string
	// postgres, if set, is the answer on PostgreSQL where it differs from SQLite's (what
	// rests on the database file: the backup download, about's dataDir).
	postgres *oaAnswer
	// path, body and header values may hold placeholders: {project} {otherProject}
	// {agent} {otherAgent} {other} (a task of the other project), {origin} (the
	// server's own origin); conversations: {conv} and {convUUID} (with three messages,
	// three documents and three linked tasks), {emptyConv} (one message, nothing else),
	// {otherConv} and {otherConvUUID} (of the other project), {convMessage},
	// {emptyConvMessage} and {otherConvMessage} (their first messages); documents: {doc}
	// (notes.txt in {conv}), {docUnicode} (résumé.txt in {conv}), {otherDoc} (in
	// {otherConv}); and fresh tasks made for the case alone: {task} (Todo, three pending
	// steps, assigned to the agent), {waiting} (Waiting, waiting_version 1), {done}
	// (Done), {unassigned} (Backlog, no agent); {taskETag} and {waitingETag} are the
	// current ETags of {task} and {waiting}.
	path string
	body string
	// auth: rw ro wo msg mr mw all data admin desktop other otherMsg (Bearer tokens; full: a
	// task:read token that holds events.MaxSocketsPerCredential streams open), "query:" and a
	// token name (sent as ?access_token=), agent, agent-bad-digest, agent-unknown,
	// agent-other (agent headers), none, "raw:" and an Authorization value, session (a
	// new session of Dana, made for the case: its id is {freshSession}; {session} is
	// another new one of hers, {otherSession} one of Eve's), or made-session (Dana's,
	// made with the harness).
	auth   string
	header map[string]string
	req    oaReq
	status int
	code   string // the error code, "" for success
	check  func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64)
}

// oaAnswer is an answer a case expects instead of its own status, code and check.
type oaAnswer struct {
	status int
	code   string
	check  func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64)
}

// oaResult is a real answer, read whole.
type oaResult struct {
	status int
	header http.Header
	body   []byte
}

func (r *oaResult) object(t *testing.T) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("answer is not a JSON object: %v: %s", err, r.body)
	}
	return v
}

func (r *oaResult) list(t *testing.T) []map[string]any {
	t.Helper()
	var v []map[string]any
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("answer is not a JSON array of objects: %v: %s", err, r.body)
	}
	return v
}

func (r *oaResult) task(t *testing.T) model.Task {
	t.Helper()
	var v model.Task
	if err := json.Unmarshal(r.body, &v); err != nil {
		t.Fatalf("answer is not a task: %v: %s", err, r.body)
	}
	return v
}

// oaHarness runs scenarios against one real server.
type oaHarness struct {
	env                   *testenv.Env
	router                routers.Router
	project, otherProject string
	agent, otherAgent     *model.Agent
	otherTask             int64
	conv, emptyConv       *model.Conversation // fixtures of the project: see oaCase
	otherConv             *model.Conversation // of the other project
	doc, docUnicode       int64               // documents of conv
	otherDoc              int64               // a document of otherConv
	// The first message of conv, of emptyConv (its only one) and of otherConv.
	convMessage, emptyConvMessage, otherConvMessage int64
	tokens                                          map[string]string   // name -> value
	scopes                                          map[string][]string // value -> scopes
	agentHeaders                                    map[string]http.Header
	covered                                         map[string]bool // "METHOD /path status" answered
	// Team mode is on: people's browser sessions (oaSession) for the session cookie's
	// operations; cookies are the session values the document's cookie scheme accepts.
	madeSession, otherSession *oaSession // Dana's made at start; Eve's
	fresh                     *oaSession // the case's own new session of Dana (see call)
	cookies                   map[string]bool
}

// oaPublicURL is the harness server's public URL: the Origin its cookie changes send.
const oaPublicURL = "http://agentdesk.test"

// oaSession is a signed-in person's session.
type oaSession struct {
	cookie, csrf string
	id           int64
}

// session signs a person of the project in (Dana or Eve, invited at start) and returns
// the new session, as a browser gets it from the callback.
func (h *oaHarness) session(t testing.TB, who string) *oaSession {
	t.Helper()
	ctx, svc := context.Background(), h.env.Service
	value, err := svc.SignIn(ctx, service.Identity{Issuer: "http://id.agentdesk.test", Subject: who, Email: who + "@example.com", EmailVerified: true,
		Name: who, UserAgent: "oa-test", Address: "192.0.2.1"})
	if err != nil {
		t.Fatalf("sign in %s: %v", who, err)
	}
	p, err := svc.Authenticate(ctx, service.Credentials{Where: service.WhereREST, Session: value, Method: "GET"})
	if err != nil {
		t.Fatalf("authenticate %s's session: %v", who, err)
	}
	list, err := svc.Sessions(ctx, p)
	if err != nil {
		t.Fatalf("%s's sessions: %v", who, err)
	}
	i := slices.IndexFunc(list, func(s service.SessionInfo) bool { return s.Current })
	if i < 0 {
		t.Fatalf("%s's new session is not listed as current: %+v", who, list)
	}
	h.cookies[value] = true
	return &oaSession{cookie: value, csrf: p.CSRFToken, id: list[i].ID}
}

// send sets the headers of a request a browser page makes with the session.
func (s *oaSession) send(header http.Header) {
	header.Set("Cookie", "agentdesk_session="+s.cookie)
	header.Set("X-CSRF-Token", s.csrf)
	header.Set("Origin", oaPublicURL)
}

const oaAgentName = "oa-worker"

func newOAHarness(t *testing.T, engine string, router routers.Router, covered map[string]bool) *oaHarness {
	t.Helper()
	// Team mode on, for the session cookie's operations; the provider never answers
	// (sessions are made by the service's SignIn, as the callback does after verifying;
	// signing out finds no end_session_endpoint, and sends the browser to /).
	env := testenv.StartWithOn(t, engine, server.Config{PublicURL: oaPublicURL, OIDC: auth.OIDC{PublicURL: oaPublicURL,
		Issuer: "http://id.agentdesk.test", ClientID: "agentdesk", Scopes: []string{"openid"}}})
	// An answer is checked as the operation's own: a redirect (POST /logout's 303) is
	// not followed to another operation.
	env.Client.CheckRedirect = func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }
	h := &oaHarness{env: env, router: router, project: env.Project.ID, tokens: map[string]string{}, scopes: map[string][]string{},
		agentHeaders: map[string]http.Header{}, covered: covered, cookies: map[string]bool{}}
	other := env.NewProject(t, "oa-other")
	h.otherProject = other.ID
	token := func(name, project, typ string, scopes ...string) {
		v := env.TypedToken(t, project, typ, scopes...)
		h.tokens[name], h.scopes[v] = v, scopes
	}
	token("rw", h.project, model.TokenPlatform, auth.TaskRead, auth.TaskWrite)
	token("ro", h.project, model.TokenPlatform, auth.TaskRead)
	token("wo", h.project, model.TokenPlatform, auth.TaskWrite)
	token("msg", h.project, model.TokenPlatform, auth.MessagingRead, auth.MessagingWrite)
	token("mr", h.project, model.TokenPlatform, auth.MessagingRead)
	token("mw", h.project, model.TokenPlatform, auth.MessagingWrite)
	token("all", h.project, model.TokenPlatform, auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite)
	token("data", h.project, model.TokenData, auth.VectorRead, auth.VectorWrite)
	token("admin", h.project, model.TokenPlatform, auth.TaskRead, auth.Admin)
	token("other", h.otherProject, model.TokenPlatform, auth.TaskRead, auth.TaskWrite)
	token("otherMsg", h.otherProject, model.TokenPlatform, auth.MessagingRead, auth.MessagingWrite)
	token("full", h.project, model.TokenPlatform, auth.TaskRead)
	for range events.MaxSocketsPerCredential { // "full" holds every socket it may
		conn, resp, err := websocket.DefaultDialer.Dial(strings.Replace(env.URL, "http://", "ws://", 1)+"/api/events",
			http.Header{"Authorization": {"Bearer " + h.tokens["full"]}})
		if err != nil {
			t.Fatalf("a stream of the full token: %v %v", err, resp)
		}
		t.Cleanup(func() { conn.Close() })
	}
	sess, err := env.Service.StartDesktopSession(context.Background(), auth.Owner(""))
	if err != nil {
		t.Fatalf("desktop session: %v", err)
	}
	h.tokens["desktop"], h.scopes[sess.Token] = sess.Token, auth.PlatformScopes // the desktop window: the local owner
	h.agent = env.Agent(t, h.project, oaAgentName)
	h.otherAgent = env.Agent(t, h.otherProject, "oa-elsewhere")
	h.agentHeaders[h.project] = env.AgentHeaders(t, h.project, oaAgentName)
	h.agentHeaders[h.otherProject] = env.AgentHeaders(t, h.otherProject, "oa-elsewhere")
	task, err := env.Service.CreateTask(context.Background(), auth.Owner(h.otherProject), service.CreateTaskInput{Summary: "secret"}, "")
	if err != nil {
		t.Fatalf("task of the other project: %v", err)
	}
	h.otherTask = task.ID
	// A few tasks of every kind, so that lists have something to show and to page through.
	for _, kind := range []string{"task", "waiting", "done", "task"} {
		h.freshTask(t, kind)
	}
	h.conversationFixtures(t)
	for _, who := range []string{"dana", "eve"} {
		if _, err := env.Service.AddMember(context.Background(), auth.Owner(h.project),
			service.AddMemberInput{Email: who + "@example.com", Role: model.RoleMember}); err != nil {
			t.Fatalf("invite %s: %v", who, err)
		}
	}
	h.madeSession, h.otherSession = h.session(t, "dana"), h.session(t, "eve")
	return h
}

// conversationFixtures makes the conversations and documents of oaCase: enough of each
// for every list to page through at least three items.
func (h *oaHarness) conversationFixtures(t *testing.T) {
	t.Helper()
	ctx, svc := context.Background(), h.env.Service
	owner, otherOwner := auth.Owner(h.project), auth.Owner(h.otherProject)
	text := func(s string) *string { return &s }
	conversation := func(p *auth.Principal, name, message string) *model.Conversation {
		in := service.CreateConversationInput{Message: text(message)}
		if name != "" {
			in.Name = text(name)
		}
		c, err := svc.CreateConversation(ctx, p, in, "")
		if err != nil {
			t.Fatalf("create conversation: %v", err)
		}
		return c
	}
	share := func(p *auth.Principal, c *model.Conversation, name string) int64 {
		d, err := svc.ShareDocument(ctx, p, c.UUID, service.DocumentUpload{Name: name, MimeType: "text/plain", Body: strings.NewReader("some notes")})
		if err != nil {
			t.Fatalf("share %s: %v", name, err)
		}
		return d.ID
	}
	h.conv = conversation(owner, "general", "hello")
	for _, m := range []string{"second", "third"} {
		if _, err := svc.PostMessage(ctx, owner, h.conv.UUID, service.PostMessageInput{Message: text(m)}, ""); err != nil {
			t.Fatalf("post message: %v", err)
		}
	}
	h.doc = share(owner, h.conv, "notes.txt")
	share(owner, h.conv, "plan.md")
	h.docUnicode = share(owner, h.conv, "résumé.txt")
	for i := range 3 {
		in := service.CreateTaskInput{Summary: fmt.Sprintf("oa linked %d", i), ConversationID: model.Ref(strconv.FormatInt(h.conv.ID, 10))}
		if _, err := svc.CreateTask(ctx, owner, in, ""); err != nil {
			t.Fatalf("create linked task: %v", err)
		}
	}
	h.emptyConv = conversation(owner, "", "nothing else here")
	conversation(owner, "spare", "a third conversation")
	h.otherConv = conversation(otherOwner, "secret", "secret")
	h.otherDoc = share(otherOwner, h.otherConv, "secret.txt")
	firstMessage := func(p *auth.Principal, c *model.Conversation) int64 {
		msgs, _, err := svc.ListMessages(ctx, p, c.UUID, service.PageInput{Limit: 1})
		if err != nil || len(msgs) != 1 {
			t.Fatalf("first message: %v, %v", msgs, err)
		}
		return msgs[0].ID
	}
	h.convMessage, h.emptyConvMessage, h.otherConvMessage = firstMessage(owner, h.conv), firstMessage(owner, h.emptyConv), firstMessage(otherOwner, h.otherConv)
}

// freshTask makes a task of the project: task (Todo with three pending steps, assigned
// to the agent), waiting (the same, then Waiting), done (the same, then Done) or
// unassigned (Backlog, no agent).
func (h *oaHarness) freshTask(t *testing.T, kind string) int64 {
	t.Helper()
	ctx, owner := context.Background(), auth.Owner(h.project)
	in := service.CreateTaskInput{Summary: "oa " + kind, Details: "made by the OpenAPI test",
		Steps: []service.StepInput{{Title: "one"}, {Title: "two"}, {Title: "three"}}, AgentID: &h.agent.ID}
	if kind == "unassigned" {
		in.AgentID = nil
	}
	task, err := h.env.Service.CreateTask(ctx, owner, in, "")
	if err != nil {
		t.Fatalf("create %s task: %v", kind, err)
	}
	switch kind {
	case "waiting":
		details := "which one?"
		_, err = h.env.Service.SetTaskStatus(ctx, owner, task.ID, model.StatusWaiting, &details, nil, nil)
	case "done":
		_, err = h.env.Service.SetTaskStatus(ctx, owner, task.ID, model.StatusDone, nil, nil, nil)
	}
	if err != nil {
		t.Fatalf("prepare %s task: %v", kind, err)
	}
	return task.ID
}

// authenticate is the openapi3filter AuthenticationFunc: it accepts a security scheme
// only when the request carries credentials this harness knows to be good for it,
// holding the scopes the document requires. A request the document calls valid must
// therefore be one the server authorises.
func (h *oaHarness) authenticate(_ context.Context, in *openapi3filter.AuthenticationInput) error {
	r, s := in.RequestValidationInput.Request, in.SecurityScheme
	holds := func(token string) error {
		held, known := h.scopes[token]
		if !known {
			return in.NewError(errors.New("unknown token"))
		}
		for _, scope := range in.Scopes {
			if !slices.Contains(held, scope) {
				return in.NewError(fmt.Errorf("the token lacks the %s scope", scope))
			}
		}
		return nil
	}
	switch {
	case s.Type == "http" && strings.EqualFold(s.Scheme, "bearer"):
		scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") {
			return in.NewError(errors.New("no Bearer credentials"))
		}
		return holds(strings.TrimSpace(token))
	case s.Type == "apiKey" && s.In == "query":
		// ?access_token= of the event stream.
		if r.Header.Get("Authorization") != "" {
			return in.NewError(errors.New("an Authorization header wins over the query token"))
		}
		return holds(r.URL.Query().Get(s.Name))
	case s.Type == "apiKey" && s.In == "cookie":
		ck, err := r.Cookie(s.Name)
		if err != nil || !h.cookies[ck.Value] {
			return in.NewError(errors.New("no session cookie this test made"))
		}
		return nil
	case s.Type == "apiKey" && s.In == "header":
		// The project is the path's {projectId}, the query's project_id (event stream),
		// or the body's project_id (agent callback).
		project := in.RequestValidationInput.PathParams["projectId"]
		if project == "" {
			project = r.URL.Query().Get("project_id")
		}
		if project == "" && r.GetBody != nil {
			if rc, err := r.GetBody(); err == nil {
				var body struct {
					ProjectID string `json:"project_id"`
				}
				_ = json.NewDecoder(rc).Decode(&body)
				rc.Close()
				project = body.ProjectID
			}
		}
		good := h.agentHeaders[project]
		if good == nil || r.Header.Get(s.Name) == "" || r.Header.Get(s.Name) != good.Get(s.Name) {
			return in.NewError(fmt.Errorf("%s is not good for project %q", s.Name, project))
		}
		return nil
	}
	return in.NewError(fmt.Errorf("security scheme %s %s is not known to the test", s.Type, s.Scheme))
}

var oaPlaceholder = regexp.MustCompile(`\{(project|otherProject|agent|otherAgent|other|origin|conv|convUUID|emptyConv|otherConv|otherConvUUID|` +
	`convMessage|emptyConvMessage|otherConvMessage|` +
	`freshSession|session|otherSession|` +
	`doc|docUnicode|otherDoc|task|waiting|done|unassigned|taskETag|waitingETag)\}`)

// call runs one case: it validates the request against the document (as the case
// says), sends it to the real server, checks status and error code, and validates
// the answer against the document, always.
func (h *oaHarness) call(t *testing.T, c oaCase, ids map[string]int64) *oaResult {
	t.Helper()
	h.fresh = nil
	fresh := func() *oaSession {
		if h.fresh == nil {
			h.fresh = h.session(t, "dana")
		}
		return h.fresh
	}
	fill := func(s string) string {
		return oaPlaceholder.ReplaceAllStringFunc(s, func(m string) string {
			switch name := m[1 : len(m)-1]; name {
			case "freshSession":
				return strconv.FormatInt(fresh().id, 10)
			case "session":
				return strconv.FormatInt(h.session(t, "dana").id, 10)
			case "otherSession":
				return strconv.FormatInt(h.otherSession.id, 10)
			case "project":
				return h.project
			case "otherProject":
				return h.otherProject
			case "agent":
				return strconv.FormatInt(h.agent.ID, 10)
			case "otherAgent":
				return strconv.FormatInt(h.otherAgent.ID, 10)
			case "other":
				return strconv.FormatInt(h.otherTask, 10)
			case "origin": // its public URL: with one, the server has no other origin
				return oaPublicURL
			case "conv":
				return strconv.FormatInt(h.conv.ID, 10)
			case "convUUID":
				return h.conv.UUID
			case "emptyConv":
				return strconv.FormatInt(h.emptyConv.ID, 10)
			case "convMessage":
				return strconv.FormatInt(h.convMessage, 10)
			case "emptyConvMessage":
				return strconv.FormatInt(h.emptyConvMessage, 10)
			case "otherConvMessage":
				return strconv.FormatInt(h.otherConvMessage, 10)
			case "otherConv":
				return strconv.FormatInt(h.otherConv.ID, 10)
			case "otherConvUUID":
				return h.otherConv.UUID
			case "doc":
				return strconv.FormatInt(h.doc, 10)
			case "docUnicode":
				return strconv.FormatInt(h.docUnicode, 10)
			case "otherDoc":
				return strconv.FormatInt(h.otherDoc, 10)
			default:
				// A fresh task, or with ETag after its name, that task's current ETag.
				kind, etag := strings.CutSuffix(name, "ETag")
				if _, ok := ids[kind]; !ok {
					ids[kind] = h.freshTask(t, kind)
				}
				if etag {
					task, err := h.env.Service.GetTask(context.Background(), auth.Owner(h.project), ids[kind])
					if err != nil || task.ETag == "" {
						t.Fatalf("the ETag of the %s task: %q, %v", kind, task.ETag, err)
					}
					return task.ETag
				}
				return strconv.FormatInt(ids[kind], 10)
			}
		})
	}
	path, body := fill(c.path), []byte(fill(c.body))
	header := http.Header{}
	if len(body) > 0 {
		header.Set("Content-Type", "application/json")
	}
	switch a := c.auth; {
	case a == "none":
	case a == "session":
		fresh().send(header)
	case a == "made-session":
		h.madeSession.send(header)
	case strings.HasPrefix(a, "raw:"):
		header.Set("Authorization", strings.TrimPrefix(a, "raw:"))
	case strings.HasPrefix(a, "query:"):
		token, ok := h.tokens[strings.TrimPrefix(a, "query:")]
		if !ok {
			t.Fatalf("unknown auth %q", a)
		}
		sep := "?"
		if strings.Contains(path, "?") {
			sep = "&"
		}
		path += sep + "access_token=" + url.QueryEscape(token)
	case strings.HasPrefix(a, "agent"):
		good := h.agentHeaders[h.project]
		if a == "agent-other" {
			good = h.agentHeaders[h.otherProject]
		}
		maps.Copy(header, good.Clone())
		switch a {
		case "agent", "agent-other":
		case "agent-bad-digest":
			header.Set(api.HeaderTaskAuthorization, strings.Repeat("0", 40))
		case "agent-unknown":
			header.Set(api.HeaderAgentName, "nobody")
		default:
			t.Fatalf("unknown auth %q", a)
		}
	default:
		token, ok := h.tokens[a]
		if !ok {
			t.Fatalf("unknown auth %q", a)
		}
		header.Set("Authorization", "Bearer "+token)
	}
	for k, v := range c.header {
		header.Set(k, fill(v))
	}
	newRequest := func() *http.Request {
		var rd io.Reader
		if len(body) > 0 {
			rd = bytes.NewReader(body)
		}
		req, err := http.NewRequest(c.method, h.env.URL+path, rd)
		if err != nil {
			t.Fatalf("new request: %v", err)
		}
		req.Header = header.Clone()
		return req
	}

	// The request, as the document sees it. HEAD is no operation of its own: it is
	// validated as the GET it mirrors, its answer without a body (TestOpenAPIHead).
	ctx := context.Background()
	vreq := newRequest()
	if c.method == http.MethodHead {
		vreq.Method = http.MethodGet
	}
	route, pathParams, err := h.router.FindRoute(vreq)
	if err != nil {
		t.Fatalf("%s %s is not an operation of openapi.json: %v", c.method, path, err)
	}
	input := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: pathParams, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: h.authenticate, SchemaValidationOptions: oaSchemaOptions}}
	switch err := openapi3filter.ValidateRequest(ctx, input); {
	case c.req == oaValid && err != nil:
		t.Errorf("%s %s: openapi.json rejects this request, which should be valid: %v", c.method, path, err)
	case c.req == oaInvalid && err == nil:
		t.Errorf("%s %s: openapi.json accepts this request, which it should reject (the server answers %d)", c.method, path, c.status)
	}

	// The real answer.
	resp, err := h.env.Client.Do(newRequest())
	if err != nil {
		t.Fatalf("%s %s: %v", c.method, path, err)
	}
	var raw []byte
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// On 101 net/http hands over the connection itself as the body (a WebSocket
		// here): the answer has no body, and reading would wait on the stream. Closing
		// the connection ends the stream. TestOpenAPIEventStream reads its frames.
		resp.Body.Close()
	} else {
		raw, err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("read answer: %v", err)
		}
	}
	res := &oaResult{status: resp.StatusCode, header: resp.Header, body: raw}
	h.covered[fmt.Sprintf("%s %s %d", vreq.Method, route.Path, res.status)] = true
	if res.status != c.status {
		t.Errorf("%s %s: status %d, want %d; body %.300s", c.method, path, res.status, c.status, raw)
	}
	var envelope struct {
		Error struct{ Code string } `json:"error"`
	}
	_ = json.Unmarshal(raw, &envelope)
	if envelope.Error.Code != c.code {
		t.Errorf("%s %s: error code %q, want %q; body %.300s", c.method, path, envelope.Error.Code, c.code, raw)
	}

	// The answer, as the document sees it: its status must be documented, its headers
	// and body must match.
	rinput := &openapi3filter.ResponseValidationInput{RequestValidationInput: input, Status: res.status, Header: res.header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, SchemaValidationOptions: oaSchemaOptions, ExcludeResponseBody: c.method == http.MethodHead}}
	rinput.SetBodyBytes(raw)
	if err := openapi3filter.ValidateResponse(ctx, rinput); err != nil {
		t.Errorf("%s %s: the %d answer does not match openapi.json: %v\nbody: %.1000s", c.method, path, res.status, err, raw)
	}
	if res.status == http.StatusNoContent && len(raw) != 0 {
		t.Errorf("%s %s: 204 with a body: %.300s", c.method, path, raw)
	}
	if res.status == http.StatusUnauthorized && !strings.HasPrefix(res.header.Get("WWW-Authenticate"), "Bearer") {
		t.Errorf("%s %s: 401 without WWW-Authenticate: Bearer", c.method, path)
	}
	if c.check != nil && !t.Failed() {
		c.check(t, h, res, ids)
	}
	return res
}

// linkNext returns the URL of a Link: <...>; rel="next" header, or "".
func oaLinkNext(t *testing.T, r *oaResult) string {
	t.Helper()
	link := r.header.Get("Link")
	if link == "" {
		return ""
	}
	m := regexp.MustCompile(`^<([^>]+)>; rel="next"$`).FindStringSubmatch(link)
	if m == nil {
		t.Fatalf("malformed Link header %q", link)
	}
	return m[1]
}

// oaPages checks paging: following Link from a first page of one task gives the whole
// list, oldest first, each page validated like any answer.
func oaPages(auth, fullPath string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
	return func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		var got []float64
		for page := 1; ; page++ {
			items := r.list(t)
			if len(items) != 1 {
				t.Fatalf("page %d has %d tasks, want 1 (limit=1)", page, len(items))
			}
			got = append(got, items[0]["id"].(float64))
			next := oaLinkNext(t, r)
			if next == "" {
				break
			}
			if !strings.Contains(next, "limit=1") || !strings.Contains(next, "after_id=") {
				t.Fatalf("Link %q does not keep limit and set after_id", next)
			}
			if page > 1000 { // a loop guard: every scenario adds tasks to the shared project
				t.Fatal("more than 1000 pages")
			}
			r = h.call(t, oaCase{method: "GET", path: next, auth: auth, status: 200}, ids)
		}
		full := h.call(t, oaCase{method: "GET", path: fullPath, auth: auth, status: 200}, ids)
		if full.header.Get("Link") != "" {
			t.Errorf("a list without limit has a Link header")
		}
		var want []float64
		for _, item := range full.list(t) {
			want = append(want, item["id"].(float64))
		}
		if len(want) < 3 || !slices.Equal(got, want) || !slices.IsSorted(got) {
			t.Errorf("pages give ids %v, the whole list %v (want equal, ascending, at least 3)", got, want)
		}
	}
}

// oaNoConversationInLists checks that list items leave out conversation.
func oaNoConversationInLists(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
	items := r.list(t)
	if len(items) == 0 {
		t.Fatal("empty list")
	}
	for _, item := range items {
		if _, ok := item["conversation"]; ok {
			t.Errorf("list item %v carries conversation", item["id"])
		}
	}
}

// oaHasConversation checks that a single task carries its conversation.
func oaHasConversation(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
	if _, ok := r.object(t)["conversation"]; !ok {
		t.Errorf("single task without conversation: %s", r.body)
	}
}

// oaETagIs checks that the answer carries the current ETag of the case's fresh task of
// that kind (as it is after the answer: an update's answer carries the new one).
func oaETagIs(kind string) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
	return func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
		t.Helper()
		task, err := h.env.Service.GetTask(context.Background(), auth.Owner(h.project), ids[kind])
		if err != nil || task.ETag == "" || r.header.Get("ETag") != task.ETag {
			t.Errorf("the answer's ETag %q, the %s task's %q (%v)", r.header.Get("ETag"), kind, task.ETag, err)
		}
	}
}

// oaIs decodes the answer as a T and checks it.
func oaIs[T any](want func(h *oaHarness, v T) error) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
	return func(t *testing.T, h *oaHarness, r *oaResult, _ map[string]int64) {
		t.Helper()
		var v T
		if err := json.Unmarshal(r.body, &v); err != nil {
			t.Fatalf("answer is not a %T: %v: %s", v, err, r.body)
		}
		if err := want(h, v); err != nil {
			t.Errorf("%v: %s", err, r.body)
		}
	}
}

// oaLen checks the length of a list answer.
func oaLen(atLeast, atMost int) func(t *testing.T, h *oaHarness, r *oaResult, ids map[string]int64) {
	return func(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
		if n := len(r.list(t)); n < atLeast || n > atMost {
			t.Errorf("%d items, want %d to %d: %.300s", n, atLeast, atMost, r.body)
		}
	}
}

// oaWSKey is the Sec-WebSocket-Key of the scenarios' handshakes (the example of RFC 6455).
const oaWSKey = "dGhlIHNhbXBsZSBub25jZQ=="

// oaHandshake is the headers of a WebSocket opening handshake, changed by extra name,
// value pairs (an empty value leaves the header out).
func oaHandshake(extra ...string) map[string]string {
	h := map[string]string{"Connection": "Upgrade", "Upgrade": "websocket", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Key": oaWSKey}
	for i := 0; i+1 < len(extra); i += 2 {
		if extra[i+1] == "" {
			delete(h, extra[i])
		} else {
			h[extra[i]] = extra[i+1]
		}
	}
	return h
}

// oaUpgraded checks a 101 answer: Sec-WebSocket-Accept is the one RFC 6455 (4.2.2)
// derives from oaWSKey.
func oaUpgraded(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
	sum := sha1.Sum([]byte(oaWSKey + "258EAFA5-E914-47DA-95CA-C5AB0DC85B11"))
	if got, want := r.header.Get("Sec-WebSocket-Accept"), base64.StdEncoding.EncodeToString(sum[:]); got != want {
		t.Errorf("Sec-WebSocket-Accept %q, want %q", got, want)
	}
}

// oaRefusedHandshake checks a refusal of the WebSocket library: in the envelope (the
// code is checked by call), naming the protocol version it speaks.
func oaRefusedHandshake(t *testing.T, _ *oaHarness, r *oaResult, _ map[string]int64) {
	if v := r.header.Get("Sec-WebSocket-Version"); v != "13" {
		t.Errorf("Sec-WebSocket-Version %q, want 13", v)
	}
}

// oaMultipart builds a multipart/form-data body and its Content-Type header; each part
// is {name, filename, Content-Type, content}, empty strings leaving a header out.
func oaMultipart(parts ...[4]string) (body string, header map[string]string) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	if err := w.SetBoundary("oa-boundary-5d1b3f"); err != nil {
		panic(err)
	}
	for _, p := range parts {
		h := textproto.MIMEHeader{}
		params := map[string]string{"name": p[0]}
		if p[1] != "" {
			params["filename"] = p[1]
		}
		h.Set("Content-Disposition", mime.FormatMediaType("form-data", params))
		if p[2] != "" {
			h.Set("Content-Type", p[2])
		}
		pw, err := w.CreatePart(h)
		if err != nil {
			panic(err)
		}
		_, _ = io.WriteString(pw, p[3])
	}
	if err := w.Close(); err != nil {
		panic(err)
	}
	return buf.String(), map[string]string{"Content-Type": w.FormDataContentType()}
}
