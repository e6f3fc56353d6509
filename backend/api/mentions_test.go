package api_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestMentionsREST: a posted message answers with the mentions its content makes (a
// name nobody in the project has stays text, and another project's agent of the same
// name is not the one named); the mentioned agent hears of it on the event stream it
// already follows, and finds it at GET .../mentions.
func TestMentionsREST(t *testing.T) { pgtest.Engines(t, testMentionsREST) }

func testMentionsREST(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx := context.Background()
	p := env.Project.ID
	tok := env.Token(t, p, "messaging:read", "messaging:write")
	worker := env.Agent(t, p, "worker")
	other := env.NewProject(t, "other")
	otherTok := env.Token(t, other.ID, "messaging:read", "messaging:write")
	otherWorker := env.Agent(t, other.ID, "worker")

	project, err := env.Service.Project(ctx, auth.Owner(""), p)
	if err != nil {
		t.Fatal(err)
	}
	agent := client.New(env.URL, client.WithAgent(p, auth.AgentDigest(p, project.TokenSecret), "worker", ""))
	stream, err := agent.Events(ctx, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer stream.Close()

	mentions := func(token, project string, headers http.Header, query string, want int) []model.Message {
		t.Helper()
		r := env.Do(t, testenv.Request{Method: "GET", Path: "/api/projects/" + project + "/mentions" + query, Token: token, Header: headers})
		if r.Status != want {
			t.Fatalf("GET mentions%s: %d %s, want %d", query, r.Status, r.Body, want)
		}
		var out []model.Message
		if want == http.StatusOK {
			r.JSON(t, &out)
		}
		return out
	}
	post := func(token, project, text string) (model.Message, string) {
		t.Helper()
		r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/projects/" + project + "/conversations", Token: token,
			Body: map[string]string{"message": "start"}})
		var c model.Conversation
		r.JSON(t, &c)
		r = env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/projects/%s/conversations/%d/messages", project, c.ID),
			Token: token, Body: map[string]string{"message": text}})
		if r.Status != http.StatusCreated {
			t.Fatalf("post: %d %s", r.Status, r.Body)
		}
		var m model.Message
		r.JSON(t, &m)
		return m, string(r.Body)
	}

	// Another project's "@worker" names its own worker only.
	if m, _ := post(otherTok, other.ID, "@worker look"); len(m.Mentions) != 1 || *m.Mentions[0].AgentID != otherWorker.ID {
		t.Fatalf("mentions in the other project: %+v, want its own worker %d", m.Mentions, otherWorker.ID)
	}
	headers := env.AgentHeaders(t, p, "worker")
	if got := mentions("", p, headers, "", http.StatusOK); len(got) != 0 {
		t.Fatalf("the worker's mentions before any: %+v", got)
	}

	m, raw := post(tok, p, "@Worker, can you look? cc @nobody")
	want := model.Mention{Kind: "agent", Name: "worker", AgentID: &worker.ID, Text: "@Worker"}
	if len(m.Mentions) != 1 || m.Mentions[0].Kind != want.Kind || m.Mentions[0].Name != want.Name ||
		*m.Mentions[0].AgentID != worker.ID || m.Mentions[0].Text != want.Text || m.Mentions[0].UserID != nil {
		t.Fatalf("mentions %s, want only %+v", raw, want)
	}
	if !strings.Contains(raw, `"mentions":[{"kind":"agent","name":"worker","agentId":`) {
		t.Fatalf("answer %s: want mentions as the OpenAPI document says", raw)
	}

	// The agent hears of it on its event stream: message.created names it.
	deadline := time.Now().Add(10 * time.Second)
	for {
		if time.Now().After(deadline) {
			t.Fatal("no message.created event mentioning the worker within 10 s")
		}
		e, err := stream.Next()
		if err != nil {
			t.Fatal(err)
		}
		if e.Type != "message.created" {
			continue
		}
		var got model.Message
		if err := json.Unmarshal(e.Data, &got); err != nil {
			t.Fatal(err)
		}
		if got.ID == m.ID {
			if len(got.Mentions) != 1 || got.Mentions[0].AgentID == nil || *got.Mentions[0].AgentID != worker.ID {
				t.Fatalf("event %s: want the worker among its mentions", e.Data)
			}
			break
		}
	}

	// ... and in its list, newest first, paged with before_id.
	second, _ := post(tok, p, "and again, @worker")
	got := mentions("", p, headers, "?limit=1", http.StatusOK)
	if len(got) != 1 || got[0].ID != second.ID {
		t.Fatalf("first page %+v, want message %d", got, second.ID)
	}
	got = mentions("", p, headers, fmt.Sprintf("?limit=1&before_id=%d", second.ID), http.StatusOK)
	if len(got) != 1 || got[0].ID != m.ID {
		t.Fatalf("second page %+v, want message %d", got, m.ID)
	}
	// The token (the CLI's: the local owner's) was not mentioned.
	if got := mentions(tok, p, nil, "", http.StatusOK); len(got) != 0 {
		t.Fatalf("the token's mentions %+v, want none", got)
	}
	for _, q := range []string{"?limit=0", "?limit=1001", "?limit=x", "?before_id=-1"} {
		mentions(tok, p, nil, q, http.StatusBadRequest)
	}
	mentions(otherTok, p, nil, "", http.StatusNotFound)
	mentions(env.Token(t, p, "task:read"), p, nil, "", http.StatusForbidden)
}
