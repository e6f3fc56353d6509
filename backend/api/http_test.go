package api_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/api"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// The HTTP conventions every route shares (RFC 9110; contract.md, "Round 2 decisions"):
// bodies that are not one JSON object, HEAD, 405 with Allow, gzip, Location, and the
// error envelope on the answers gin and net/http give themselves.

// TestBodyMustBeAnObject: every endpoint that takes a JSON object answers 400 to a body
// that is valid JSON but not an object, and changes nothing (a null agent body used to
// unassign the task).
func TestBodyMustBeAnObject(t *testing.T) { pgtest.Engines(t, testBodyMustBeAnObject) }

func testBodyMustBeAnObject(t *testing.T, engine string) {
	f := newFixture(t, engine)
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

// httpWorld is a server with one object of every kind, and for every route pattern of
// the router a real path to it with credentials good for it.
type httpWorld struct {
	env     *testenv.Env
	samples map[string]httpSample // "METHOD /pattern" (gin's :params) -> a request
}

type httpSample struct {
	path   string
	token  string
	header http.Header
}

func newHTTPWorld(t *testing.T) *httpWorld {
	t.Helper()
	env := testenv.Start(t)
	ctx, pid := context.Background(), env.Project.ID
	all := env.Token(t, pid, "task:read", "task:write", "messaging:read", "messaging:write")
	data := env.TypedToken(t, pid, model.TokenData, "vector:read", "vector:write")
	sess, err := env.Service.StartDesktopSession(ctx, auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	task, err := env.Service.CreateTask(ctx, auth.Owner(pid), service.CreateTaskInput{Summary: "s", Steps: []service.StepInput{{Title: "one"}}}, "")
	if err != nil {
		t.Fatal(err)
	}
	message := "hello"
	conv, err := env.Service.CreateConversation(ctx, auth.Owner(pid), service.CreateConversationInput{Message: &message}, "")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := env.Service.ShareDocument(ctx, auth.Owner(pid), conv.UUID, service.DocumentUpload{Name: "a.txt", MimeType: "text/plain", Body: strings.NewReader("notes")})
	if err != nil {
		t.Fatal(err)
	}
	r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/vector/spaces", Token: data, Body: `{"name":"kb"}`})
	var space struct{ ID int64 }
	r.JSON(t, &space)
	r = env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/vector/spaces/%d/documents", space.ID), Token: data, Body: `{"name":"d","text":"some text"}`})
	var vdoc struct{ ID int64 }
	r.JSON(t, &vdoc)
	fill := strings.NewReplacer(":projectId", pid, ":id", fmt.Sprint(task.ID), ":stepNum", "0", ":conversationId", fmt.Sprint(conv.ID),
		":spaceId", fmt.Sprint(space.ID))
	w := &httpWorld{env: env, samples: map[string]httpSample{}}
	for _, route := range api.NewRouter(env.Service, env.Server.Hub, nil).Routes() {
		s := httpSample{path: fill.Replace(route.Path), token: all}
		switch {
		case strings.HasPrefix(route.Path, "/api/vector/"):
			s.token, s.path = data, strings.Replace(s.path, ":docId", fmt.Sprint(vdoc.ID), 1)
		case strings.Contains(route.Path, ":docId"):
			s.path = strings.Replace(s.path, ":docId", fmt.Sprint(doc.ID), 1)
		case route.Path == "/api/backup":
			s.token = sess.Token
		case strings.HasPrefix(route.Path, "/api/agent_callback/"):
			s.token, s.header = "", env.AgentHeaders(t, pid, "nobody")
		case route.Path == "/healthz" || route.Path == "/api/openapi.json":
			s.token = ""
		}
		w.samples[route.Method+" "+route.Path] = s
	}
	return w
}

func (w *httpWorld) do(t *testing.T, method string, s httpSample, header http.Header) *testenv.Response {
	t.Helper()
	h := s.header.Clone()
	if h == nil {
		h = http.Header{}
	}
	for k, v := range header {
		h[k] = v
	}
	return w.env.Do(t, testenv.Request{Method: method, Path: s.path, Token: s.token, Header: h})
}

// TestHeadOnEveryGetRoute: HEAD answers every GET route (the UI's pages and files, and
// the WebSocket routes, included) with GET's status and headers and no body. A HEAD
// with WebSocket upgrade headers does not upgrade: it answers as a plain GET does.
func TestHeadOnEveryGetRoute(t *testing.T) {
	w := newHTTPWorld(t)
	upgrade := http.Header{"Connection": {"Upgrade"}, "Upgrade": {"websocket"}, "Sec-Websocket-Version": {"13"},
		"Sec-Websocket-Key": {"dGhlIHNhbXBsZSBub25jZQ=="}}
	samples := map[string]httpSample{"UI /": {path: "/"}, "UI page": {path: "/tasks/1"}, "UI missing asset": {path: "/assets/none.js"}}
	gets := 0
	for key, s := range w.samples {
		if method, _, _ := strings.Cut(key, " "); method == http.MethodGet {
			samples[key], gets = s, gets+1
		}
	}
	if gets < 15 {
		t.Fatalf("only %d GET routes", gets)
	}
	for key, s := range samples {
		for _, extra := range []http.Header{nil, upgrade} {
			// Accept-Encoding set by hand: Go's client asks for gzip on GET only, and then
			// hides the Content-Encoding it undoes.
			for _, enc := range []string{"identity", "gzip"} {
				get := w.do(t, "GET", s, http.Header{"Accept-Encoding": {enc}}) // HEAD with upgrade headers is compared with a plain GET
				head := w.do(t, "HEAD", s, mergeHeader(extra, http.Header{"Accept-Encoding": {enc}}))
				if head.Status != get.Status || len(head.Body) != 0 {
					t.Errorf("HEAD %s (%s): %d with %d bytes of body; GET answers %d", s.path, key, head.Status, len(head.Body), get.Status)
					continue
				}
				for _, h := range []http.Header{get.Header, head.Header} {
					h.Del("Date")
					h.Del("Content-Disposition") // the backup's file name carries the date
				}
				if get.Header.Get("Content-Length") == "" {
					head.Header.Del("Content-Length") // GET was chunked; HEAD may tell the length
				}
				if !reflect.DeepEqual(get.Header, head.Header) {
					t.Errorf("HEAD %s (%s, %s): headers differ from GET's:\nGET  %v\nHEAD %v", s.path, key, enc, get.Header, head.Header)
				}
			}
		}
	}
}

func mergeHeader(hs ...http.Header) http.Header {
	out := http.Header{}
	for _, h := range hs {
		for k, v := range h {
			out[k] = v
		}
	}
	return out
}

// TestMethodNotAllowed: a known path with a method it lacks answers 405 with Allow
// (HEAD wherever GET is) and the error envelope; unknown paths stay 404.
func TestMethodNotAllowed(t *testing.T) {
	w := newHTTPWorld(t)
	allowed := map[string][]string{} // sample path -> methods
	paths := map[string]httpSample{}
	for key, s := range w.samples {
		method, _, _ := strings.Cut(key, " ")
		allowed[s.path] = append(allowed[s.path], method)
		if method == http.MethodGet {
			allowed[s.path] = append(allowed[s.path], http.MethodHead)
		}
		paths[s.path] = s
	}
	// GET and PATCH /api/tasks/{id} take /api/tasks/done too (and answer 400: not an id).
	allowed["/api/tasks/done"] = append(allowed["/api/tasks/done"], http.MethodGet, http.MethodHead, http.MethodPatch)
	// And DELETE and PATCH /api/tasks/{id} take /api/tasks/counts (400 as well).
	if _, ok := allowed["/api/tasks/counts"]; ok {
		allowed["/api/tasks/counts"] = append(allowed["/api/tasks/counts"], http.MethodDelete, http.MethodPatch)
	}
	checked := 0
	for path, s := range paths {
		for _, method := range []string{"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"} {
			if slices.Contains(allowed[path], method) {
				continue
			}
			checked++
			r := w.do(t, method, s, nil)
			got := strings.Split(r.Header.Get("Allow"), ", ")
			if r.Status != http.StatusMethodNotAllowed || !sameSet(got, allowed[path]) {
				t.Errorf("%s %s: %d, Allow %q; want 405 with Allow %v", method, path, r.Status, r.Header.Get("Allow"), allowed[path])
				continue
			}
			if method != "HEAD" && (r.ErrorCode() != "method_not_allowed" || !strings.HasPrefix(r.Header.Get("Content-Type"), "application/json")) {
				t.Errorf("%s %s: 405 not in the error envelope: %s %s", method, path, r.Header.Get("Content-Type"), r.Body)
			}
		}
	}
	if checked < 40 {
		t.Fatalf("only %d wrong methods tried", checked)
	}
	for _, path := range []string{"/api/nothing", "/api/tasks/1/nothing", "/nothing"} {
		r := w.env.Do(t, testenv.Request{Method: "PATCH", Path: path})
		if r.Status != http.StatusNotFound || r.Header.Get("Allow") != "" {
			t.Errorf("PATCH %s (an unknown path): %d Allow %q, want 404", path, r.Status, r.Header.Get("Allow"))
		}
	}
}

func sameSet(a, b []string) bool {
	return len(a) == len(b) && !slices.ContainsFunc(a, func(s string) bool { return !slices.Contains(b, s) })
}

// TestCreatedLocation: every 201 that creates an object with a URL of its own carries
// Location, that URL, and GET there (DELETE for a vector document, which has no GET)
// reaches the same object.
func TestCreatedLocation(t *testing.T) { pgtest.Engines(t, testCreatedLocation) }

func testCreatedLocation(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	all := env.Token(t, pid, "task:read", "task:write", "messaging:read", "messaging:write")
	data := env.TypedToken(t, pid, model.TokenData, "vector:read", "vector:write")
	created := func(r *testenv.Response, wantPrefix string) (string, int64) {
		t.Helper()
		var v struct{ ID int64 }
		r.JSON(t, &v)
		loc := r.Header.Get("Location")
		if r.Status != http.StatusCreated || loc != fmt.Sprintf("%s%d", wantPrefix, v.ID) {
			t.Fatalf("%d, Location %q; want 201 with Location %s%d", r.Status, loc, wantPrefix, v.ID)
		}
		return loc, v.ID
	}
	sameID := func(loc, token string, id int64) {
		t.Helper()
		r := env.Do(t, testenv.Request{Method: "GET", Path: loc, Token: token})
		var v struct{ ID int64 }
		if r.Status == http.StatusOK && strings.HasPrefix(r.Header.Get("Content-Type"), "application/json") {
			r.JSON(t, &v)
		}
		if r.Status != http.StatusOK || (v.ID != 0 && v.ID != id) {
			t.Fatalf("GET %s: %d %.200s; want object %d", loc, r.Status, r.Body, id)
		}
	}
	loc, id := created(env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: all, Body: `{"summary":"s"}`}), "/api/tasks/")
	sameID(loc, all, id)
	convs := "/api/projects/" + pid + "/conversations"
	loc, conv := created(env.Do(t, testenv.Request{Method: "POST", Path: convs, Token: all, Body: `{"message":"m"}`}), convs+"/")
	sameID(loc, all, conv)
	body, header := oaMultipart([4]string{"file", "a.txt", "text/plain", "notes"})
	docs := fmt.Sprintf("%s/%d/documents", convs, conv)
	loc, id = created(env.Do(t, testenv.Request{Method: "POST", Path: docs, Token: all, Body: body,
		Header: http.Header{"Content-Type": {header["Content-Type"]}}}), docs+"/")
	sameID(loc, all, id)
	loc, space := created(env.Do(t, testenv.Request{Method: "POST", Path: "/api/vector/spaces", Token: data, Body: `{"name":"kb"}`}), "/api/vector/spaces/")
	sameID(loc, data, space)
	loc, _ = created(env.Do(t, testenv.Request{Method: "POST", Path: loc + "/documents", Token: data, Body: `{"name":"d","text":"some text"}`}),
		fmt.Sprintf("/api/vector/spaces/%d/documents/", space))
	if r := env.Do(t, testenv.Request{Method: "DELETE", Path: loc, Token: data}); r.Status != http.StatusNoContent {
		t.Fatalf("DELETE %s: %d %s", loc, r.Status, r.Body)
	}
}

// TestGzip: text answers are gzipped when the client accepts it (and big enough to be
// worth it), with Vary: Accept-Encoding whether gzipped or not; never a WebSocket
// upgrade, a 204, or a type that is compressed already.
func TestGzip(t *testing.T) { pgtest.Engines(t, testGzip) }

func testGzip(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	all := env.Token(t, pid, "task:read", "task:write", "messaging:read", "messaging:write")
	raw := &http.Client{Transport: &http.Transport{DisableCompression: true}} // sees what is on the wire
	get := func(method, path, token, acceptEncoding string, body io.Reader, header http.Header) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, env.URL+path, body)
		for k, v := range header {
			req.Header[k] = v
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if acceptEncoding != "" {
			req.Header.Set("Accept-Encoding", acceptEncoding)
		}
		resp, err := raw.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return resp, b
	}
	gunzip := func(b []byte) []byte {
		t.Helper()
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			t.Fatalf("not gzip: %v", err)
		}
		out, err := io.ReadAll(zr)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	varies := func(resp *http.Response) bool { return slices.Contains(resp.Header.Values("Vary"), "Accept-Encoding") }
	for i := range 30 {
		env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: all, Body: fmt.Sprintf(`{"summary":"task %d","details":"some details to make the list long"}`, i)})
	}

	// The OpenAPI document (precompressed) and a long JSON list (compressed on the fly).
	for _, path := range []string{"/api/openapi.json", "/api/tasks"} {
		plain, want := get("GET", path, all, "identity", nil, nil)
		if plain.Header.Get("Content-Encoding") != "" || !varies(plain) || plain.StatusCode != 200 {
			t.Errorf("GET %s without gzip: %d Content-Encoding %q Vary %q", path, plain.StatusCode, plain.Header.Get("Content-Encoding"), plain.Header.Values("Vary"))
		}
		for _, ae := range []string{"gzip", "gzip, deflate, br", "br;q=1.0, gzip;q=0.8", "*", "x-gzip"} {
			resp, b := get("GET", path, all, ae, nil, nil)
			if resp.Header.Get("Content-Encoding") != "gzip" || !varies(resp) || resp.StatusCode != 200 {
				t.Errorf("GET %s, Accept-Encoding %q: %d Content-Encoding %q Vary %q", path, ae, resp.StatusCode, resp.Header.Get("Content-Encoding"), resp.Header.Values("Vary"))
				continue
			}
			if got := gunzip(b); !bytes.Equal(got, want) {
				t.Errorf("GET %s gzipped is not the plain answer (%d bytes vs %d)", path, len(got), len(want))
			}
			if len(b) >= len(want)/3 {
				t.Errorf("GET %s: gzip made %d bytes of %d", path, len(b), len(want))
			}
		}
		for _, ae := range []string{"gzip;q=0", "deflate", "*;q=0", "identity, *;q=0"} {
			if resp, _ := get("GET", path, all, ae, nil, nil); resp.Header.Get("Content-Encoding") != "" {
				t.Errorf("GET %s, Accept-Encoding %q: gzipped", path, ae)
			}
		}
	}
	// HTML and errors are text too; a small answer is not worth it but still varies.
	resp, _ := get("GET", "/", "", "gzip", nil, nil)
	if !varies(resp) || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("GET /: Content-Type %q Vary %q", resp.Header.Get("Content-Type"), resp.Header.Values("Vary"))
	}
	resp, b := get("GET", "/api/tasks/1", all, "gzip", nil, nil)
	if resp.Header.Get("Content-Encoding") != "" || !varies(resp) || resp.Header.Get("Content-Length") != fmt.Sprint(len(b)) {
		t.Errorf("a small task: Content-Encoding %q Vary %q Content-Length %q (%d bytes)", resp.Header.Get("Content-Encoding"), resp.Header.Values("Vary"), resp.Header.Get("Content-Length"), len(b))
	}
	// 204: nothing to compress.
	resp, b = get("DELETE", "/api/tasks/2", all, "gzip", nil, nil)
	if resp.StatusCode != http.StatusNoContent || resp.Header.Get("Content-Encoding") != "" || len(b) != 0 {
		t.Errorf("DELETE: %d Content-Encoding %q, %d bytes", resp.StatusCode, resp.Header.Get("Content-Encoding"), len(b))
	}
	// A document: text is compressed, an image (compressed already) is not.
	convs := "/api/projects/" + pid + "/conversations"
	r := env.Do(t, testenv.Request{Method: "POST", Path: convs, Token: all, Body: `{"message":"m"}`})
	var conv struct{ ID int64 }
	r.JSON(t, &conv)
	for _, c := range []struct {
		mimeType string
		gzipped  bool
	}{{"text/plain", true}, {"image/png", false}} {
		body, header := oaMultipart([4]string{"file", "f", c.mimeType, strings.Repeat("abcdefgh", 1000)})
		r := env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("%s/%d/documents", convs, conv.ID), Token: all, Body: body,
			Header: http.Header{"Content-Type": {header["Content-Type"]}}})
		var doc struct{ URL string }
		r.JSON(t, &doc)
		resp, _ := get("GET", doc.URL, all, "gzip", nil, nil)
		if got := resp.Header.Get("Content-Encoding") == "gzip"; got != c.gzipped || resp.StatusCode != 200 {
			t.Errorf("a %s document: %d, gzipped %v, want %v", c.mimeType, resp.StatusCode, got, c.gzipped)
		}
	}
	// A WebSocket upgrade is never wrapped: it upgrades and carries frames.
	dialer := websocket.Dialer{}
	conn, wsResp, err := dialer.Dial("ws"+strings.TrimPrefix(env.URL, "http")+"/api/events?since=0",
		http.Header{"Authorization": {"Bearer " + all}, "Accept-Encoding": {"gzip"}})
	if err != nil {
		t.Fatalf("WebSocket with Accept-Encoding gzip: %v", err)
	}
	defer conn.Close()
	if wsResp.Header.Get("Content-Encoding") != "" {
		t.Errorf("the upgrade says Content-Encoding %q", wsResp.Header.Get("Content-Encoding"))
	}
	var frame struct{ Seq int64 }
	if err := conn.ReadJSON(&frame); err != nil || frame.Seq < 1 {
		t.Fatalf("first frame: %+v %v", frame, err)
	}
}

// TestPropertyFindings holds what TestOpenAPIProperties found where the server accepted
// a request the document refuses: an empty assigned= (the document: only "me"), and an
// over-long waitingDetails beside waiting_details (the document bounds both), on the
// status and in the agent callback.
func TestPropertyFindings(t *testing.T) { pgtest.Engines(t, testPropertyFindings) }

func testPropertyFindings(t *testing.T, engine string) {
	f := newFixture(t, engine)
	r := f.env.Do(t, testenv.Request{Method: "GET", Path: "/api/projects/" + f.project + "/tasks?assigned=", Token: f.ro})
	if r.Status != http.StatusBadRequest || r.ErrorCode() != "invalid_argument" {
		t.Errorf("assigned=: %d %s, want 400", r.Status, r.Body)
	}
	long := strings.Repeat("y", 100_001)
	r = f.env.Do(t, testenv.Request{Method: "PUT", Path: fmt.Sprintf("/api/tasks/%d/status", f.todo), Token: f.rw,
		Body: `{"status":"Waiting","waiting_details":"ok","waitingDetails":"` + long + `"}`})
	if r.Status != http.StatusBadRequest || r.ErrorCode() != "invalid_argument" {
		t.Errorf("an over-long waitingDetails: %d %.200s, want 400", r.Status, r.Body)
	}
	r = f.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/agent_callback/%d", f.todo), Header: f.env.AgentHeaders(t, f.project, "worker"),
		Body: `{"project_id":"` + f.project + `","waiting_details":"ok","waitingDetails":"` + long + `"}`})
	if r.Status != http.StatusBadRequest || r.ErrorCode() != "invalid_argument" {
		t.Errorf("an over-long waitingDetails in the callback: %d %.200s, want 400", r.Status, r.Body)
	}
}
