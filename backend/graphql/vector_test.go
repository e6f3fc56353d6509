package graphql_test

import (
	"context"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestVectorDomain: admin platform tokens (the web UI's) manage and search spaces;
// platform tokens without admin and other projects are kept out; links reach the
// agent's environment. Data tokens are refused on /graphql (TestDataTokensRefused).
func TestVectorDomain(t *testing.T) { pgtest.Engines(t, testVectorDomain) }

func testVectorDomain(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	p := env.Project.ID
	admin := env.Token(t, p, auth.Admin)
	plain := env.Token(t, p, auth.TaskRead, auth.TaskWrite)
	other := env.NewProject(t, "other")
	otherAdmin := env.Token(t, other.ID, auth.Admin)
	agent := env.Agent(t, p, "librarian")
	otherAgent := env.Agent(t, other.ID, "stranger")

	var sp struct {
		ID            int64
		Name          string
		DocumentCount int
		AgentIDs      []int64 `json:"agentIds"`
	}
	do(t, env, admin, `mutation { createVectorSpace(name: "handbook", description: "how we work") { id name documentCount agentIds } }`, nil).ok(t).into(t, "createVectorSpace", &sp)
	if sp.ID < 1 || sp.Name != "handbook" || sp.DocumentCount != 0 || len(sp.AgentIDs) != 0 {
		t.Fatalf("space %+v", sp)
	}
	id := strconv.FormatInt(sp.ID, 10)
	if c := do(t, env, admin, `mutation { createVectorSpace(name: "handbook") { id } }`, nil).code(t); c != "conflict" {
		t.Errorf("duplicate name: %s", c)
	}
	if c := do(t, env, plain, `{ vectorSpaces { id } }`, nil).code(t); c != "forbidden" {
		t.Errorf("platform token without admin: %s", c)
	}
	if c := do(t, env, plain, `mutation { createVectorSpace(name: "x") { id } }`, nil).code(t); c != "forbidden" {
		t.Errorf("platform token without admin creating: %s", c)
	}
	if c := do(t, env, otherAdmin, `{ vectorSpace(id: `+id+`) { id } }`, nil).code(t); c != "not_found" {
		t.Errorf("another project's space: %s", c)
	}

	var doc struct {
		ID         int64
		ChunkCount int
	}
	do(t, env, admin, `mutation($s: Int!, $t: String!) { addVectorDocument(spaceId: $s, name: "ops.md", text: $t) { id chunkCount } }`,
		map[string]any{"s": sp.ID, "t": "# Backups\n\nRun agentdesk backup nightly from cron.\n\n# Ports\n\nChange the port with --addr."}).ok(t).into(t, "addVectorDocument", &doc)
	if doc.ID < 1 || doc.ChunkCount != 2 {
		t.Fatalf("document %+v", doc)
	}
	var docs []struct{ ID int64 }
	do(t, env, admin, `{ vectorDocuments(spaceId: `+id+`) { id name mimeType size chunkCount createdAt } }`, nil).ok(t).into(t, "vectorDocuments", &docs)
	if len(docs) != 1 || docs[0].ID != doc.ID {
		t.Errorf("documents %+v", docs)
	}
	var results []struct {
		DocumentName string
		Chunk        string
		Score        float64
		Similarity   *float64
	}
	do(t, env, admin, `{ vectorSearch(spaceId: `+id+`, query: "how do I change the port?", k: 1) { documentId documentName chunkId chunkIndex chunk score similarity } }`, nil).ok(t).into(t, "vectorSearch", &results)
	if len(results) != 1 || !strings.Contains(results[0].Chunk, "--addr") || results[0].Similarity == nil || results[0].Score <= 0 {
		t.Fatalf("search %+v", results)
	}
	if c := do(t, env, admin, `{ vectorSearch(spaceId: `+id+`, query: "x", k: 500) { chunk } }`, nil).code(t); c != "invalid_argument" {
		t.Errorf("k over 100: %s", c)
	}

	// Links, and the agent's environment.
	do(t, env, admin, `mutation { linkSpaceToAgent(spaceId: `+id+`, agentId: `+strconv.FormatInt(agent.ID, 10)+`) { id agentIds } }`, nil).ok(t).into(t, "linkSpaceToAgent", &sp)
	if !slices.Equal(sp.AgentIDs, []int64{agent.ID}) {
		t.Errorf("linked agents %v", sp.AgentIDs)
	}
	do(t, env, admin, `mutation { linkSpaceToAgent(spaceId: `+id+`, agentId: `+strconv.FormatInt(agent.ID, 10)+`) { id } }`, nil).ok(t) // twice: no error
	if c := do(t, env, admin, `mutation { linkSpaceToAgent(spaceId: `+id+`, agentId: `+strconv.FormatInt(otherAgent.ID, 10)+`) { id } }`, nil).code(t); c != "not_found" {
		t.Errorf("linking another project's agent: %s", c)
	}
	var second struct{ ID int64 }
	do(t, env, admin, `mutation { createVectorSpace(name: "faq") { id } }`, nil).ok(t).into(t, "createVectorSpace", &second)
	do(t, env, admin, `mutation { linkSpaceToAgent(spaceId: `+strconv.FormatInt(second.ID, 10)+`, agentId: `+strconv.FormatInt(agent.ID, 10)+`) { id } }`, nil).ok(t)
	envVars, err := env.Service.AgentEnv(context.Background(), auth.Owner(p), "librarian", "http://x")
	if err != nil {
		t.Fatal(err)
	}
	want := "AGENTDESK_VECTOR_SPACES=" + id + "," + strconv.FormatInt(second.ID, 10)
	var got []string
	for _, v := range envVars {
		got = append(got, v.Name+"="+v.Value)
	}
	if !slices.Contains(got, want) || len(got) != 7 || !strings.HasPrefix(got[0], "SERVICE_NAMESPACE=") || got[5] != "AGENTDESK_URL=http://x" {
		t.Errorf("agent env %v, want the six usual lines then %s", got, want)
	}
	do(t, env, admin, `mutation { unlinkSpaceFromAgent(spaceId: `+id+`, agentId: `+strconv.FormatInt(agent.ID, 10)+`) { agentIds } }`, nil).ok(t)
	do(t, env, admin, `mutation { deleteVectorSpace(id: `+strconv.FormatInt(second.ID, 10)+`) }`, nil).ok(t)
	envVars, _ = env.Service.AgentEnv(context.Background(), auth.Owner(p), "librarian", "http://x")
	if len(envVars) != 6 {
		t.Errorf("an agent without linked spaces gets %d variables: %v", len(envVars), envVars)
	}

	do(t, env, admin, `mutation { deleteVectorDocument(spaceId: `+id+`, id: `+strconv.FormatInt(doc.ID, 10)+`) }`, nil).ok(t)
	if c := do(t, env, admin, `mutation { deleteVectorDocument(spaceId: `+id+`, id: `+strconv.FormatInt(doc.ID, 10)+`) }`, nil).code(t); c != "not_found" {
		t.Errorf("deleting twice: %s", c)
	}
	var spaces []struct{ ID int64 }
	do(t, env, admin, `{ vectorSpaces { id name description embedder dimensions documentCount chunkCount agentIds createdAt } }`, nil).ok(t).into(t, "vectorSpaces", &spaces)
	if len(spaces) != 1 || spaces[0].ID != sp.ID {
		t.Errorf("spaces %+v", spaces)
	}
}

// TestDataTokensRefused: data tokens (vector:read / vector:write) are for /api/vector
// only; /graphql refuses them before anything runs, whatever the operation, over HTTP
// (403 forbidden, no data) and over WebSocket (the upgrade, or connection_init: 4403).
func TestDataTokensRefused(t *testing.T) { pgtest.Engines(t, testDataTokensRefused) }

func testDataTokensRefused(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	p := env.Project.ID
	data := env.TypedToken(t, p, model.TokenData, auth.VectorRead, auth.VectorWrite)
	admin := env.Token(t, p, auth.Admin)
	agent := env.Agent(t, p, "librarian")
	var sp struct {
		ID       int64
		AgentIDs []int64 `json:"agentIds"`
	}
	do(t, env, admin, `mutation { createVectorSpace(name: "handbook") { id } }`, nil).ok(t).into(t, "createVectorSpace", &sp)
	id, aid := strconv.FormatInt(sp.ID, 10), strconv.FormatInt(agent.ID, 10)

	for _, q := range []string{
		`{ projects { id name namespace } }`,
		`{ viewer { kind scopes } }`,
		`{ vectorSpaces { id } }`,
		`{ vectorSearch(spaceId: ` + id + `, query: "x") { chunk } }`,
		`mutation { linkSpaceToAgent(spaceId: ` + id + `, agentId: ` + aid + `) { id } }`,
		`{ __typename }`,
	} {
		r := do(t, env, data, q, nil)
		if r.status != http.StatusForbidden || r.code(t) != "forbidden" || strings.Contains(r.raw, `"data"`) || !strings.Contains(r.raw, "/api/vector") {
			t.Errorf("%s with a data token: %d %s", q, r.status, r.raw)
		}
	}
	do(t, env, admin, `{ vectorSpace(id: `+id+`) { agentIds } }`, nil).ok(t).into(t, "vectorSpace", &sp)
	if len(sp.AgentIDs) != 0 {
		t.Errorf("a data token linked a space to an agent: %v", sp.AgentIDs)
	}
	get := env.Do(t, testenv.Request{Method: http.MethodGet, Path: "/graphql?query=%7B%20projects%20%7B%20id%20%7D%20%7D", Token: data})
	if get.Status != http.StatusForbidden {
		t.Errorf("GET with a data token: %d %s", get.Status, get.Body)
	}

	// WebSocket: the upgrade's header, then connection_init's payload.
	if _, resp, err := dialWS(t, env.URL, http.Header{"Authorization": {"Bearer " + data}}); err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Errorf("upgrade with a data token: %v %v", err, resp)
	}
	c, _, err := dialWS(t, env.URL, nil)
	if err != nil {
		t.Fatal(err)
	}
	c.send(wsMsg{Type: "connection_init", Payload: mustJSON(map[string]any{"Authorization": "Bearer " + data})})
	if code, reason := c.closed(); code != 4403 || !strings.Contains(reason, "data tokens") {
		t.Errorf("connection_init with a data token: %d %q", code, reason)
	}
	// The same data token still works where it belongs.
	if r := env.Do(t, testenv.Request{Method: http.MethodGet, Path: "/api/vector/spaces", Token: data}); r.Status != http.StatusOK {
		t.Errorf("the data token on /api/vector: %d %s", r.Status, r.Body)
	}
}
