package graphql_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// The project's secret lets its holder act as any agent, so agentEnv (which shows it)
// and rotateProjectSecret (which replaces it) need admin plus every agent scope; a
// rotation refuses the old digest at once, cache or no cache.
func TestProjectSecret(t *testing.T) { pgtest.Engines(t, testProjectSecret) }

func testProjectSecret(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	pid := env.Project.ID
	env.Agent(t, pid, "coder")
	other := env.NewProject(t, "Other")
	env.Agent(t, other.ID, "helper")

	// Holding admin is not enough: every scope an agent holds is needed too.
	for _, scopes := range [][]string{
		{auth.Admin},
		{auth.Admin, auth.TaskRead, auth.TaskWrite, auth.MessagingRead},
		{auth.TaskRead, auth.TaskWrite, auth.MessagingRead, auth.MessagingWrite},
	} {
		tok := env.Token(t, pid, scopes...)
		for _, q := range []string{`{ agentEnv(name: "coder") { name value } }`, `mutation { rotateProjectSecret { tokenSecret } }`} {
			r := do(t, env, tok, q, nil)
			if r.code(t) != "forbidden" || strings.Contains(r.raw, env.Project.TokenSecret) {
				t.Errorf("%s with %v: %s", q, scopes, r.raw)
			}
		}
	}

	// Agents authenticate with the current secret; these requests also fill the caches.
	tasks := func(projectID string, h http.Header) int {
		return env.Do(t, testenv.Request{Method: http.MethodGet, Path: "/api/projects/" + projectID + "/tasks", Header: h}).Status
	}
	oldHeaders := env.AgentHeaders(t, pid, "coder")
	otherHeaders := env.AgentHeaders(t, other.ID, "helper")
	if s := tasks(pid, oldHeaders); s != http.StatusOK {
		t.Fatalf("agent before rotation: %d", s)
	}
	tasks(other.ID, otherHeaders)

	full := env.Token(t, pid, allScopes...)
	secretOf := func() string {
		var vars []struct{ Name, Value string }
		do(t, env, full, `{ agentEnv(name: "coder") { name value } }`, nil).ok(t).into(t, "agentEnv", &vars)
		for _, v := range vars {
			if v.Name == "SERVICE_TOKEN_SECRET" {
				return v.Value
			}
		}
		t.Fatalf("agentEnv has no SERVICE_TOKEN_SECRET: %v", vars)
		return ""
	}
	before := secretOf()

	var rotated struct{ ID, Name, Namespace, TokenSecret string }
	do(t, env, full, `mutation { rotateProjectSecret { id name namespace tokenSecret } }`, nil).ok(t).into(t, "rotateProjectSecret", &rotated)
	if rotated.ID != pid || rotated.Name != env.Project.Name || rotated.Namespace != env.Project.Namespace ||
		len(rotated.TokenSecret) != 40 || rotated.TokenSecret == before {
		t.Fatalf("rotateProjectSecret = %+v (before %s)", rotated, before)
	}
	if after := secretOf(); after != rotated.TokenSecret {
		t.Fatalf("agentEnv after rotation gives %s, want %s", after, rotated.TokenSecret)
	}

	// The old digest is refused at once; the new one works; other projects are untouched.
	if s := tasks(pid, oldHeaders); s != http.StatusUnauthorized {
		t.Fatalf("old digest after rotation: %d", s)
	}
	if s := tasks(pid, env.AgentHeaders(t, pid, "coder")); s != http.StatusOK {
		t.Fatalf("new digest after rotation: %d", s)
	}
	if h := env.AgentHeaders(t, pid, "coder"); h.Get("X-Task-Authorization") != auth.AgentDigest(pid, rotated.TokenSecret) {
		t.Fatalf("stored secret differs from the one returned")
	}
	if s := tasks(other.ID, otherHeaders); s != http.StatusOK {
		t.Fatalf("another project's agent after rotation: %d", s)
	}

	// The rotation is in the activity trail, and no event carries the secret.
	var acts []struct{ Action, ObjectType, ObjectID string }
	do(t, env, full, `{ activity(first: 5) { action objectType objectId } }`, nil).ok(t).into(t, "activity", &acts)
	if len(acts) == 0 || acts[0].Action != "project.secret_rotated" || acts[0].ObjectType != "project" || acts[0].ObjectID != pid {
		t.Fatalf("activity after rotation: %+v", acts)
	}
}
