package api_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
)

// TestOpenAPIProperties is a property test in the manner of Schemathesis: for every
// operation of openapi.json it generates requests from the operation's parameter and
// body schemas, valid ones and deliberately broken ones, sends them with real
// credentials to a real server, and checks each answer:
//   - never a 5xx;
//   - its status is one the operation documents, and its headers and body match;
//   - a request the document rejects for its parameters or body is not accepted (2xx).
//
// The run is bounded (about 600 requests, 25 seconds). The seed is random and logged;
// AGENTDESK_PROPERTY_SEED=N replays a run.
func TestOpenAPIProperties(t *testing.T) {
	doc := oaLoad(t)
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatalf("router: %v", err)
	}
	h := newOAHarness(t, "sqlite", router, map[string]bool{})
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("AGENTDESK_PROPERTY_SEED"); s != "" {
		if seed, err = strconv.ParseUint(s, 10, 64); err != nil {
			t.Fatalf("AGENTDESK_PROPERTY_SEED: %v", err)
		}
	}
	t.Logf("seed %d: AGENTDESK_PROPERTY_SEED=%d replays this run", seed, seed)
	g := newOAGen(t, doc, h, rand.New(rand.NewPCG(seed, seed>>1)))
	fixtures := maps.Clone(g.pools) // before requests add the objects they create

	type operation struct {
		method, path string
		op           *openapi3.Operation
		item         *openapi3.PathItem
	}
	var ops []operation
	for _, path := range doc.Paths.InMatchingOrder() {
		item := doc.Paths.Value(path)
		for method, op := range item.Operations() {
			ops = append(ops, operation{method, path, op, item})
		}
	}
	slices.SortFunc(ops, func(a, b operation) int { return strings.Compare(a.method+a.path, b.method+b.path) })

	const rounds, budget = 30, 25 * time.Second
	deadline := time.Now().Add(budget)
	sent, succeeded, failures := map[string]int{}, map[string]bool{}, 0
	stats := map[string]int{}
	report := func(o operation, req *oaPropRequest, problems []string) {
		for _, p := range problems {
			failures++
			t.Errorf("%s %s (%s): %s\n  request: %s", o.method, req.url, req.note, p, req.describe())
		}
		if failures > 25 {
			t.Fatal("too many failures; stopping")
		}
	}
	// First the JSON values that are not objects, as whole bodies, everywhere a JSON
	// body goes: too rare for chance to find each of them at each operation.
	for _, o := range ops {
		if o.op.RequestBody == nil || o.op.RequestBody.Value.Content.Get("application/json") == nil {
			continue
		}
		for _, body := range []string{"null", "[]", `[{}]`, `"x"`, "1", "true"} {
			req := g.request(o.method, o.path, o.item, o.op, true)
			req.body, req.note = []byte(body), "body not an object"
			req.header.Set("Content-Type", "application/json")
			problems, kind, status, _ := g.check(router, req)
			sent[o.method+" "+o.path]++
			stats[fmt.Sprintf("%s %dxx", kind, status/100)]++
			report(o, req, problems)
		}
	}
	for round := 0; round < rounds && time.Now().Before(deadline); round++ {
		// Requests change and delete what they find: fresh tasks keep every operation
		// within reach (respond needs a Waiting task, the callback one of the agent's).
		g.add("id", strconv.FormatInt(h.freshTask(t, "waiting"), 10))
		g.add("id", strconv.FormatInt(h.freshTask(t, "task"), 10))
		g.freshVectorDocument(fmt.Sprintf("round %d", round))
		for _, o := range ops {
			valid := round%3 != 2 // two valid rounds for each broken one
			req := g.request(o.method, o.path, o.item, o.op, valid)
			problems, kind, status, body := g.check(router, req)
			if status == http.StatusCreated { // what was made becomes a value to use, as links say
				g.created(o.path, req, body)
			}
			key := o.method + " " + o.path
			sent[key]++
			stats[fmt.Sprintf("%s %dxx", kind, status/100)]++
			if succeeds(status) {
				succeeded[key] = true
			}
			report(o, req, problems)
		}
	}
	// Chance may leave an operation that needs a particular state (respond needs a
	// Waiting task, and the answer its current waiting_version or none) without a 2xx:
	// top those up with valid requests whose only task is a fresh Waiting one, so the
	// coverage check below fails only when the operation really cannot succeed. They
	// draw from the fixtures' values (conversations made on the way have no messages
	// for a read marker), and are not bound by the budget: a slow machine is no reason
	// to leave an operation untried.
	for attempt := 0; attempt < 40; attempt++ {
		var missing []operation
		for _, o := range ops {
			if key := o.method + " " + o.path; !succeeded[key] && key != "GET /api/events" {
				missing = append(missing, o)
			}
		}
		if len(missing) == 0 {
			break
		}
		grown := g.pools
		g.pools = maps.Clone(fixtures)
		g.pools["id"] = []string{strconv.FormatInt(h.freshTask(t, "waiting"), 10)}
		for _, o := range missing {
			req := g.request(o.method, o.path, o.item, o.op, true)
			problems, kind, status, _ := g.check(router, req)
			key := o.method + " " + o.path
			sent[key]++
			stats[fmt.Sprintf("%s %dxx", kind, status/100)]++
			if succeeds(status) {
				succeeded[key] = true
			}
			report(o, req, problems)
		}
		g.pools = grown
	}
	total := 0
	for _, o := range ops {
		key := o.method + " " + o.path
		total += sent[key]
		if sent[key] < 6 {
			t.Errorf("%s: only %d requests in the time given", key, sent[key])
		}
		if !succeeded[key] && key != "GET /api/events" { // a WebSocket: no 2xx without an upgrade
			t.Errorf("%s: no generated request succeeded (2xx, or 303): the generator does not reach it", key)
		}
	}
	t.Logf("%d requests over %d operations: %v", total, len(ops), stats)
}

// oaGen makes requests for TestOpenAPIProperties.
type oaGen struct {
	t     *testing.T
	doc   *openapi3.T
	h     *oaHarness
	rnd   *rand.Rand
	pools map[string][]string // path parameter name -> good values (fixtures) to draw from
	// pairs: conversationId or spaceId -> (that, docId) pairs of documents that exist
	pairs map[string][][2]string
	// messages: a conversationId as the path spelt it -> a message posted there, for
	// the read marker (conversations created on the way have none until one is posted)
	messages map[string]int64
}

func newOAGen(t *testing.T, doc *openapi3.T, h *oaHarness, rnd *rand.Rand) *oaGen {
	t.Helper()
	g := &oaGen{t: t, doc: doc, h: h, rnd: rnd}
	var tasks []string
	for _, kind := range []string{"task", "task", "waiting", "waiting", "done", "unassigned"} {
		tasks = append(tasks, strconv.FormatInt(h.freshTask(t, kind), 10))
	}
	id := func(v int64) string { return strconv.FormatInt(v, 10) }
	g.pairs = map[string][][2]string{
		"conversationId": {{id(h.conv.ID), id(h.doc)}, {h.conv.UUID, id(h.docUnicode)}},
	}
	g.messages = map[string]int64{id(h.conv.ID): h.convMessage, h.conv.UUID: h.convMessage,
		id(h.emptyConv.ID): h.emptyConvMessage, id(h.otherConv.ID): h.otherConvMessage}
	g.pools = map[string][]string{
		"projectId":      {h.project, h.project, h.project, h.project, h.project, h.otherProject},
		"id":             append(tasks, id(h.otherTask)),
		"conversationId": {id(h.conv.ID), h.conv.UUID, id(h.emptyConv.ID), id(h.otherConv.ID)},
		"docId":          {id(h.doc), id(h.docUnicode), id(h.otherDoc)},
		"stepNum":        {"0", "1", "2"},
		"sessionId":      {strconv.FormatInt(h.madeSession.id, 10), strconv.FormatInt(h.otherSession.id, 10)},
	}
	return g
}

// freshVectorDocument makes a knowledge base with one document, for the vector
// operations to find (requests delete them too).
func (g *oaGen) freshVectorDocument(name string) {
	ctx, p, text := context.Background(), auth.Owner(g.h.project), "the server listens on 127.0.0.1 by default"
	sp, err := g.h.env.Service.Knowledge().CreateSpace(ctx, p, service.CreateVectorSpaceInput{Name: &name})
	if err != nil {
		g.t.Fatalf("space: %v", err)
	}
	vd, err := g.h.env.Service.Knowledge().AddDocument(ctx, p, sp.ID, service.AddVectorDocumentInput{Name: &name, Text: &text})
	if err != nil {
		g.t.Fatalf("vector document: %v", err)
	}
	space, doc := strconv.FormatInt(sp.ID, 10), strconv.FormatInt(vd.ID, 10)
	g.add("spaceId", space)
	g.add("vectorDocId", doc)
	g.pairs["spaceId"] = append(g.pairs["spaceId"], [2]string{space, doc})
}

func (g *oaGen) chance(p float64) bool { return g.rnd.Float64() < p }

// add makes v a value of the path parameter name, drawn more often than older ones.
func (g *oaGen) add(name, v string) { g.pools[name] = append(g.pools[name], v) }

// created adds the id of an object a 201 created to the values of its parameter.
func (g *oaGen) created(path string, r *oaPropRequest, body []byte) {
	var v struct{ ID int64 }
	if json.Unmarshal(body, &v) != nil || v.ID == 0 {
		return
	}
	name := map[string]string{
		"/api/tasks": "id",
		"/api/projects/{projectId}/conversations":                            "conversationId",
		"/api/vector/spaces":                                                 "spaceId",
		"/api/vector/spaces/{spaceId}/documents":                             "vectorDocId",
		"/api/projects/{projectId}/conversations/{conversationId}/documents": "docId",
	}[path]
	if name != "" {
		g.add(name, strconv.FormatInt(v.ID, 10))
	}
	if strings.HasSuffix(path, "/conversations/{conversationId}/messages") {
		g.messages[r.pathValues["conversationId"]] = v.ID
	}
	// A document is only found in its own conversation or space.
	switch name {
	case "docId":
		g.pairs["conversationId"] = append(g.pairs["conversationId"], [2]string{r.pathValues["conversationId"], strconv.FormatInt(v.ID, 10)})
	case "vectorDocId":
		g.pairs["spaceId"] = append(g.pairs["spaceId"], [2]string{r.pathValues["spaceId"], strconv.FormatInt(v.ID, 10)})
	}
}

func pick[T any](g *oaGen, vs []T) T { return vs[g.rnd.IntN(len(vs))] }

// oaPropRequest is one generated request.
type oaPropRequest struct {
	method, url string
	pathValues  map[string]string
	header      http.Header
	body        []byte
	note        string // what was broken on purpose, or "valid"
}

func (r *oaPropRequest) describe() string {
	b := string(r.body)
	if len(b) > 300 {
		b = b[:300] + fmt.Sprintf("... (%d bytes)", len(r.body))
	}
	hdr := r.header.Clone()
	hdr.Del("Authorization")
	return fmt.Sprintf("%s %s headers %v body %s", r.method, r.url, hdr, b)
}

func (r *oaPropRequest) new(base string) *http.Request {
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequest(r.method, base+r.url, body)
	if err != nil {
		panic(err)
	}
	req.Header = r.header.Clone()
	return req
}

// request generates one request for an operation: valid, or broken in one place.
func (g *oaGen) request(method, path string, item *openapi3.PathItem, op *openapi3.Operation, valid bool) *oaPropRequest {
	r := &oaPropRequest{method: method, header: http.Header{}, note: "valid", pathValues: map[string]string{}}
	params := slices.Concat(item.Parameters, op.Parameters)
	// A document path takes a document of the conversation (space) in the path.
	fixed := map[string]string{}
	for _, parent := range []string{"conversationId", "spaceId"} {
		if strings.Contains(path, "{"+parent+"}") && strings.Contains(path, "{docId}") && g.chance(0.7) {
			pair := pick(g, g.pairs[parent])
			fixed[parent], fixed["docId"] = pair[0], pair[1]
		}
	}
	// Where the break goes: a parameter, the body, or the credentials.
	breakAt := -1
	if !valid {
		breakAt = g.rnd.IntN(len(params) + 2) // len: the body, len+1: the credentials
	}
	u := path
	query := url.Values{}
	for i, pr := range params {
		p := pr.Value
		if p.In == "header" && (strings.HasPrefix(p.Name, "Sec-WebSocket") || p.Name == "Connection" || p.Name == "Upgrade" || p.Name == "Origin") {
			continue // the event stream's handshake: TestOpenAPIScenarios covers it
		}
		if !p.Required && i != breakAt && !g.chance(0.5) {
			continue
		}
		var v string
		if i == breakAt {
			v = g.badParam(p)
			r.note = fmt.Sprintf("bad %s parameter %s", p.In, p.Name)
		} else if f, ok := fixed[p.Name]; ok && p.In == "path" {
			v = f
		} else {
			v = g.goodParam(path, p)
		}
		switch p.In {
		case "path":
			r.pathValues[p.Name] = v
			u = strings.Replace(u, "{"+p.Name+"}", url.PathEscape(v), 1)
		case "query":
			query.Set(p.Name, v)
		case "header":
			r.header.Set(p.Name, v)
		}
	}
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	r.url = u
	if op.RequestBody != nil {
		g.body(r, path, op.RequestBody.Value, breakAt == len(params))
	}
	g.credentials(r, op, breakAt == len(params)+1)
	return r
}

func (g *oaGen) goodParam(path string, p *openapi3.Parameter) string {
	name := p.Name
	if name == "docId" && strings.HasPrefix(path, "/api/vector/") {
		name = "vectorDocId"
	}
	if pool := g.pools[name]; len(pool) > 0 && g.chance(0.85) {
		if len(pool) > 4 && g.chance(0.6) {
			return pick(g, pool[len(pool)-4:]) // the newest: most likely still there
		}
		return pick(g, pool)
	}
	if name == "Idempotency-Key" {
		return fmt.Sprintf("prop-%d", g.rnd.IntN(1_000_000))
	}
	v := g.value(p.Schema.Value, p.Name, 0)
	for range 8 { // a generated value must satisfy the schema (patterns are guessed)
		if p.Schema.Value.VisitJSON(v, oaSchemaOptions...) == nil {
			break
		}
		v = g.value(p.Schema.Value, p.Name, 0)
	}
	return paramString(v)
}

func paramString(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case float64:
		return strconv.FormatFloat(v, 'f', -1, 64)
	case nil:
		return ""
	}
	b, _ := json.Marshal(v)
	return string(b)
}

// badParam is a value the parameter's schema refuses, as far as it constrains one.
func (g *oaGen) badParam(p *openapi3.Parameter) string {
	s := p.Schema.Value
	switch {
	case s.Type.Is("integer"):
		bad := []string{"abc", "1.5", "99999999999999999999999", "-1"}
		if p.In != "path" { // an empty path segment is another path
			bad = append(bad, "")
		}
		if s.Min != nil {
			bad = append(bad, strconv.FormatFloat(*s.Min-1, 'f', -1, 64))
		}
		if s.Max != nil {
			bad = append(bad, strconv.FormatFloat(*s.Max+1, 'f', -1, 64))
		}
		return pick(g, bad)
	case len(s.Enum) > 0:
		return pick(g, []string{"nope", "DONE", "todo"})
	case s.Pattern != "":
		return pick(g, []string{"has space", "é", strings.Repeat("x", 200), "../x"})
	}
	return pick(g, []string{strings.Repeat("x", 2000), "a/b", "%", "é"})
}

// value generates a JSON value (as encoding/json would decode it) for a schema.
// name is the property or parameter it is for: ids are drawn from the fixtures.
func (g *oaGen) value(s *openapi3.Schema, name string, depth int) any {
	if s.Const != nil {
		return s.Const
	}
	if len(s.Enum) > 0 {
		return pick(g, s.Enum)
	}
	if len(s.AllOf) > 0 {
		return g.value(s.AllOf[0].Value, name, depth)
	}
	if len(s.OneOf)+len(s.AnyOf) > 0 && len(s.Properties) == 0 {
		return g.value(pick(g, slices.Concat(s.OneOf, s.AnyOf)).Value, name, depth)
	}
	types := s.Type.Slice()
	if len(types) == 0 {
		types = []string{"object"}
		if len(s.Properties) == 0 {
			types = []string{"string", "integer", "boolean"}
		}
	}
	typ := pick(g, types)
	if slices.Contains(types, "null") && len(types) > 1 && typ == "null" && !g.chance(0.3) {
		typ = types[0] // null now and then only
	}
	switch typ {
	case "null":
		return nil
	case "boolean":
		return g.chance(0.5)
	case "integer", "number":
		if pool := g.fieldPool(name); pool != nil && g.chance(0.7) {
			return pick(g, pool)
		}
		lo, hi := -3.0, 40.0
		if s.Min != nil {
			lo = *s.Min
		}
		if s.Max != nil {
			hi = *s.Max
		}
		if hi < lo {
			hi = lo
		}
		if hi-lo > 1000 {
			hi = lo + 1000
		}
		v := lo + float64(g.rnd.IntN(int(hi-lo)+1))
		if typ == "number" && g.chance(0.5) {
			v += 0.5
			if v > hi {
				v = lo
			}
		}
		return v
	case "string":
		return g.text(s, name)
	case "array":
		n := int(s.MinItems) + g.rnd.IntN(3)
		if s.MaxItems != nil && n > int(*s.MaxItems) {
			n = int(*s.MaxItems)
		}
		out := []any{}
		for range n {
			if s.Items == nil || depth > 4 {
				break
			}
			out = append(out, g.value(s.Items.Value, name, depth+1))
		}
		return out
	}
	// An object: its required properties, a choice of the others, and for oneOf/anyOf
	// the required properties of one branch.
	props := map[string]*openapi3.Schema{}
	for k, v := range s.Properties {
		props[k] = v.Value
	}
	want := slices.Clone(s.Required)
	if branches := slices.Concat(s.OneOf, s.AnyOf); len(branches) > 0 {
		b := pick(g, branches).Value
		want = append(want, b.Required...)
		for k, v := range b.Properties {
			if props[k] == nil {
				props[k] = v.Value
			}
		}
	}
	out := map[string]any{}
	for _, k := range slices.Sorted(func(yield func(string) bool) {
		for k := range props {
			if !yield(k) {
				return
			}
		}
	}) {
		if (slices.Contains(want, k) || g.chance(optionalChance(k))) && depth < 5 {
			out[k] = g.value(props[k], k, depth+1)
		}
	}
	return out
}

// optionalChance is how often an optional property is sent: 0.4, but seldom for a
// question's structure (waiting_options...), whose random combinations the server
// mostly refuses (options with a schema, a default without a deadline): sent as often
// as the others, they left no request of PUT status succeeding.
func optionalChance(name string) float64 {
	if strings.HasPrefix(name, "waiting_") && name != "waiting_details" && name != "waiting_version" {
		return 0.05
	}
	return 0.4
}

// fieldPool gives the ids of real objects for fields that name them.
func (g *oaGen) fieldPool(name string) []any {
	switch name {
	case "agent_id", "agentId":
		return []any{float64(g.h.agent.ID), float64(g.h.agent.ID), float64(g.h.otherAgent.ID), nil}
	case "lastReadMessageId":
		return []any{float64(g.h.convMessage), float64(g.h.emptyConvMessage), float64(g.h.otherConvMessage)}
	case "waiting_version":
		return []any{0.0, 1.0, 2.0, nil}
	case "index":
		return []any{0.0, 1.0, 2.0}
	}
	return nil
}

func (g *oaGen) text(s *openapi3.Schema, name string) any {
	switch name {
	case "project_id":
		if g.chance(0.85) {
			return g.h.project
		}
	case "conversation_id":
		return pick(g, []string{strconv.FormatInt(g.h.conv.ID, 10), g.h.conv.UUID, strconv.FormatInt(g.h.otherConv.ID, 10)})
	}
	switch s.Format {
	case "date-time":
		return time.Now().Add(time.Duration(g.rnd.IntN(1000)) * time.Hour).UTC().Format(time.RFC3339)
	case "uuid":
		return "123e4567-e89b-12d3-a456-426614174000"
	}
	words := []string{"alpha", "beta", "gamma", "Doing", "résumé", "🙂", "x", "the quick fox", "<b>", "'; drop", "\\n"}
	n := 1 + g.rnd.IntN(4)
	var b strings.Builder
	for i := range n {
		if i > 0 {
			b.WriteByte(' ')
		}
		b.WriteString(pick(g, words))
	}
	str := b.String()
	for uint64(len([]rune(str))) < s.MinLength {
		str += "x"
	}
	if s.MaxLength != nil && uint64(len([]rune(str))) > *s.MaxLength {
		str = string([]rune(str)[:*s.MaxLength])
	}
	return str
}

// body sets a request body for the operation's first content type (or another one
// now and then), valid or broken.
func (g *oaGen) body(r *oaPropRequest, path string, rb *openapi3.RequestBody, broken bool) {
	types := slices.Sorted(func(yield func(string) bool) {
		for k := range rb.Content {
			if !yield(k) {
				return
			}
		}
	})
	ct := pick(g, types)
	if ct == "multipart/form-data" {
		name, ctype, content := pick(g, []string{"notes.txt", "plan.md", "résumé.txt", "data.json"}), pick(g, []string{"text/plain", "", "application/json"}), "some text "+strconv.Itoa(g.rnd.IntN(1000))
		field := "file"
		if broken {
			field, r.note = "other", "no file part"
		}
		body, header := oaMultipart([4]string{field, name, ctype, content})
		if broken && g.chance(0.5) {
			body, header, r.note = "not multipart", map[string]string{"Content-Type": "multipart/form-data"}, "no boundary"
		}
		r.body = []byte(body)
		r.header.Set("Content-Type", header["Content-Type"])
		return
	}
	r.header.Set("Content-Type", ct)
	schema := rb.Content[ct].Schema.Value
	v := g.value(schema, "", 0)
	for range 12 {
		if schema.VisitJSON(v, oaSchemaOptions...) == nil {
			break
		}
		v = g.value(schema, "", 0)
	}
	// A read marker takes, most often, a message of the conversation in the path.
	if obj, ok := v.(map[string]any); ok && strings.HasSuffix(path, "/read") && g.chance(0.7) {
		if m, ok := g.messages[r.pathValues["conversationId"]]; ok {
			obj["lastReadMessageId"] = float64(m)
		}
	}
	if broken {
		v = g.breakValue(r, schema, v)
	}
	if raw, ok := v.(json.RawMessage); ok {
		r.body = raw
		return
	}
	b, err := json.Marshal(v)
	if err != nil {
		g.t.Fatalf("encode body: %v", err)
	}
	r.body = b
}

// breakValue returns v broken in one way the schema refuses (or not JSON at all).
func (g *oaGen) breakValue(r *oaPropRequest, s *openapi3.Schema, v any) any {
	obj, _ := v.(map[string]any)
	var fields []string
	for k := range s.Properties {
		fields = append(fields, k)
	}
	slices.Sort(fields)
	switch n := g.rnd.IntN(6); {
	case n <= 1 || obj == nil || len(fields) == 0:
		r.note = "body not an object"
		return json.RawMessage(pick(g, []string{"null", "null", "[]", `[{}]`, `"x"`, "1", "true", "{", `{"a":}`, "", "{} {}"}))
	case n == 2 && len(s.Required) > 0:
		k := pick(g, s.Required)
		delete(obj, k)
		r.note = "without required " + k
	default:
		k := pick(g, fields)
		ps := s.Properties[k].Value
		r.note = "bad field " + k
		switch {
		case ps.MaxLength != nil && g.chance(0.5):
			obj[k] = strings.Repeat("y", int(*ps.MaxLength)+1)
			r.note += " (too long)"
		case ps.Max != nil && g.chance(0.5):
			obj[k] = *ps.Max + 1
		case len(ps.Enum) > 0:
			obj[k] = "NotAValue"
		case ps.Type.Includes("string"):
			obj[k] = 12
		case ps.Type.Includes("array"):
			obj[k] = "x"
		default:
			obj[k] = []any{"x"}
		}
	}
	return obj
}

// credentials sets what the operation's security asks for (one requirement, drawn), or
// breaks it.
func (g *oaGen) credentials(r *oaPropRequest, op *openapi3.Operation, broken bool) {
	reqs := op.Security
	if reqs == nil {
		reqs = &g.doc.Security
	}
	if len(*reqs) == 0 {
		return // public
	}
	if broken {
		r.note = "bad credentials"
		switch g.rnd.IntN(4) {
		case 0: // none
		case 1:
			r.header.Set("Authorization", "Bearer adk_00000000000000000000000000000000")
		case 2:
			r.header.Set("Authorization", "Basic b2E6b2E=")
		default: // a token of another kind or with other scopes
			r.header.Set("Authorization", "Bearer "+g.h.tokens[pick(g, []string{"data", "other", "mr", "ro", "wo"})])
		}
		return
	}
	req := pick(g, *reqs)
	for scheme, scopes := range req {
		switch scheme {
		case "bearerAuth", "dataToken", "accessToken":
			var names []string
			for name, v := range g.h.tokens {
				if held := g.h.scopes[v]; !slices.ContainsFunc(scopes, func(s string) bool { return !slices.Contains(held, s) }) &&
					(scheme == "dataToken") == slices.Contains(held, auth.VectorRead) && name != "other" && name != "otherMsg" {
					names = append(names, name)
				}
			}
			slices.Sort(names)
			if len(names) == 0 {
				g.t.Fatalf("no token holds %s %v", scheme, scopes)
			}
			token := g.h.tokens[pick(g, names)]
			if scheme == "accessToken" {
				sep := "?"
				if strings.Contains(r.url, "?") {
					sep = "&"
				}
				r.url += sep + "access_token=" + url.QueryEscape(token)
			} else {
				r.header.Set("Authorization", "Bearer "+token)
			}
		case "sessionCookie": // a new session of Dana's, whose id the sessionId pool gets
			sess := g.h.session(g.t, "dana")
			sess.send(r.header)
			g.add("sessionId", strconv.FormatInt(sess.id, 10))
		case "agentToken", "agentName":
			for k, v := range g.h.agentHeaders[g.h.project] {
				r.header[k] = v
			}
			if strings.HasPrefix(r.url, "/api/events") && !strings.Contains(r.url, "project_id=") {
				sep := "?"
				if strings.Contains(r.url, "?") {
					sep = "&"
				}
				r.url += sep + "project_id=" + g.h.project
			}
		}
	}
}

// check sends the request and returns what is wrong with the answer, and how the
// document classed the request (for the log).
func (g *oaGen) check(router routers.Router, r *oaPropRequest) (problems []string, kind string, status int, body []byte) {
	ctx := context.Background()
	vreq := r.new(g.h.env.URL)
	route, pathParams, err := router.FindRoute(vreq)
	if err != nil {
		return []string{"no operation of the document matches: " + err.Error()}, "unrouted", 0, nil
	}
	input := &openapi3filter.RequestValidationInput{Request: vreq, PathParams: pathParams, Route: route,
		Options: &openapi3filter.Options{AuthenticationFunc: g.h.authenticate, SchemaValidationOptions: oaSchemaOptions, MultiError: false}}
	reqErr := openapi3filter.ValidateRequest(ctx, input)
	var secErr *openapi3filter.SecurityRequirementsError
	kind = "valid"
	switch {
	case reqErr == nil:
	case errors.As(reqErr, &secErr):
		kind = "refused credentials"
	default:
		kind = "invalid input"
	}

	resp, err := g.h.env.Client.Do(r.new(g.h.env.URL))
	if err != nil {
		return []string{"no answer: " + err.Error()}, kind, 0, nil
	}
	raw, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return []string{"reading the answer: " + err.Error()}, kind, 0, nil
	}
	if resp.StatusCode >= 500 {
		problems = append(problems, fmt.Sprintf("answered %d: %.300s", resp.StatusCode, raw))
	}
	if kind == "invalid input" && resp.StatusCode < 300 {
		problems = append(problems, fmt.Sprintf("the document rejects this request (%v), the server accepted it: %d %.200s", reqErr, resp.StatusCode, raw))
	}
	rinput := &openapi3filter.ResponseValidationInput{RequestValidationInput: input, Status: resp.StatusCode, Header: resp.Header,
		Options: &openapi3filter.Options{IncludeResponseStatus: true, SchemaValidationOptions: oaSchemaOptions}}
	rinput.SetBodyBytes(raw)
	if err := openapi3filter.ValidateResponse(ctx, rinput); err != nil {
		problems = append(problems, fmt.Sprintf("the %d answer does not match the document: %v\n  body: %.500s", resp.StatusCode, err, raw))
	}
	return problems, kind, resp.StatusCode, raw
}

// succeeds tells whether a status is an operation's success: a 2xx, or the 303 that
// sends a browser on (POST /logout without asking for JSON).
func succeeds(status int) bool { return status/100 == 2 || status == http.StatusSeeOther }
