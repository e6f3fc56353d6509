package graphql_test

import (
	"strconv"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestMentions: a message's mentions come with it in GraphQL, and the query mentions
// lists the messages that name the caller (a token nobody made is the local owner's,
// whom the project shows as "owner").
func TestMentions(t *testing.T) { pgtest.Engines(t, testMentions) }

func testMentions(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, auth.MessagingRead, auth.MessagingWrite)
	worker := env.Agent(t, env.Project.ID, "worker")
	type mention struct {
		Kind, Name, Text string
		UserID, AgentID  *int64
	}
	var conv struct{ ID int64 }
	do(t, env, tok, `mutation { createConversation(message: "@worker and @Owner, look; @ghost is nobody") { id } }`, nil).
		ok(t).into(t, "createConversation", &conv)
	var msgs []struct {
		Content  string
		Mentions []mention
	}
	do(t, env, tok, `query($c: ID!) { messages(conversationId: $c) { content mentions { kind name text userId agentId } } }`,
		map[string]any{"c": strconv.FormatInt(conv.ID, 10)}).ok(t).into(t, "messages", &msgs)
	if len(msgs) != 1 || len(msgs[0].Mentions) != 2 {
		t.Fatalf("messages %+v, want one naming the worker and the owner", msgs)
	}
	if m := msgs[0].Mentions[0]; m.Kind != "agent" || m.Name != "worker" || m.Text != "@worker" || m.AgentID == nil || *m.AgentID != worker.ID || m.UserID != nil {
		t.Fatalf("first mention %+v, want the agent worker", m)
	}
	if m := msgs[0].Mentions[1]; m.Kind != "user" || m.Name != "owner" || m.Text != "@Owner" || m.UserID == nil || m.AgentID != nil {
		t.Fatalf("second mention %+v, want the owner", m)
	}
	var mine []struct{ Content string }
	do(t, env, tok, `{ mentions(first: 5) { content } }`, nil).ok(t).into(t, "mentions", &mine)
	if len(mine) != 1 || mine[0].Content != msgs[0].Content {
		t.Fatalf("the owner's mentions %+v, want the one message", mine)
	}
	if r := do(t, env, tok, `{ mentions(first: 0) { id } }`, nil); r.code(t) != "invalid_argument" {
		t.Fatalf("first: 0 answered %+v, want invalid_argument", r)
	}
}
