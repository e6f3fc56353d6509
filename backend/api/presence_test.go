package api_test

import (
	"context"
	"encoding/json"
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// An agent's last contact (issue 20): any authenticated request of the agent, or its
// open event stream, shows as lastSeenAt on GraphQL's Agent and last_seen_at on the
// REST agent object, written at most every SeenEvery per agent and kept across restarts.
func TestAgentLastSeen(t *testing.T) { pgtest.Engines(t, testAgentLastSeen) }

func testAgentLastSeen(t *testing.T, engine string) {
	start := time.Date(2026, 5, 4, 10, 0, 0, 0, time.UTC)
	clock := jobstest.NewManualClock(start)
	dir := t.TempDir()
	env := testenv.StartWithOn(t, engine, server.Config{DataDir: dir, Clock: clock})
	tok := env.Token(t, env.Project.ID, "task:read", "admin")
	env.Agent(t, env.Project.ID, "worker")
	env.Agent(t, env.Project.ID, "idle")
	agentHeaders := env.AgentHeaders(t, env.Project.ID, "worker")

	lastSeen := func() map[string]*string {
		t.Helper()
		r := env.Do(t, testenv.Request{Method: "POST", Path: "/graphql", Token: tok,
			Body: map[string]any{"query": "{ agents { name lastSeenAt } }"}})
		var body struct {
			Data struct {
				Agents []struct {
					Name       string
					LastSeenAt *string
				}
			}
		}
		r.JSON(t, &body)
		out := map[string]*string{}
		for _, a := range body.Data.Agents {
			out[a.Name] = a.LastSeenAt
		}
		return out
	}
	is := func(got *string, want time.Time) bool { return got != nil && *got == want.Format(time.RFC3339Nano) }
	agentRequest := func() {
		t.Helper()
		r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/projects/" + env.Project.ID + "/tasks", Header: agentHeaders})
		if r.Status != 200 {
			t.Fatalf("agent request: %d %s", r.Status, r.Body)
		}
	}

	if s := lastSeen(); s["worker"] != nil || s["idle"] != nil {
		t.Fatalf("before any contact: %v", s)
	}
	agentRequest()
	if s := lastSeen(); !is(s["worker"], start) || s["idle"] != nil {
		t.Fatalf("after a request: worker %v idle %v, want %s and null", deref(s["worker"]), deref(s["idle"]), start)
	}

	// Within SeenEvery of the last recorded contact, another is not recorded again.
	clock.Advance(service.SeenEvery / 2)
	agentRequest()
	if s := lastSeen(); !is(s["worker"], start) {
		t.Fatalf("a contact within %s moved last seen to %v", service.SeenEvery, deref(s["worker"]))
	}
	clock.Advance(service.SeenEvery)
	later := clock.Now()
	agentRequest()
	if s := lastSeen(); !is(s["worker"], later) {
		t.Fatalf("a contact after %s: %v, want %s", service.SeenEvery, deref(s["worker"]), later)
	}

	// An open event stream is a contact too, with no request at all: its credentials are
	// checked every fraction of a second.
	wsURL := strings.Replace(env.URL, "http://", "ws://", 1) + "/api/events?project_id=" + env.Project.ID
	conn, resp, err := websocket.DefaultDialer.Dial(wsURL, agentHeaders)
	if err != nil {
		t.Fatalf("dial the event stream as the agent: %v (%v)", err, resp)
	}
	defer conn.Close()
	clock.Advance(2 * service.SeenEvery)
	streaming := clock.Now()
	deadline := time.Now().Add(10 * time.Second)
	for s := lastSeen(); !is(s["worker"], streaming); s = lastSeen() {
		if time.Now().After(deadline) {
			t.Fatalf("an open stream did not count as contact: %v, want %s", deref(s["worker"]), streaming)
		}
		time.Sleep(20 * time.Millisecond) // polling for the stream's next check, not a timed assertion
	}
	conn.Close()

	// Written to the database by the background flush: the REST agent object has it too.
	if err := env.Service.FlushTokenUse(context.Background()); err != nil {
		t.Fatal(err)
	}
	agents, err := env.Service.Store().Read().Agents(context.Background(), env.Project.ID)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(agents)
	var rest []map[string]any
	_ = json.Unmarshal(raw, &rest)
	for _, a := range rest {
		seen, present := a["last_seen_at"]
		switch a["name"] {
		case "worker":
			if seen != streaming.Format(time.RFC3339Nano) {
				t.Errorf("stored last_seen_at of worker: %v, want %s", seen, streaming)
			}
		case "idle":
			if !present || seen != nil {
				t.Errorf("an agent never seen: last_seen_at %v (present %v), want null", seen, present)
			}
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return "null"
	}
	return *s
}
