package service_test

import (
	"context"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"strconv"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// convWorld is a service on a fresh database with a project, a user, an agent, a
// read-only user and a second project.
type convWorld struct {
	svc          *service.Service
	st           *store.Store
	project      string
	user, reader *auth.Principal
	agent        *auth.Principal
	agentID      int64
	outsider     *auth.Principal // a user of another project
	otherAgentID int64           // an agent of another project
}

func newConvWorld(t *testing.T, engine string) *convWorld {
	t.Helper()
	return worldOf(t, openService(t, engine))
}

// worldOf is newConvWorld on svc.
func worldOf(t *testing.T, svc *service.Service) *convWorld {
	t.Helper()
	ctx := context.Background()
	p, err := svc.CreateProject(ctx, auth.Owner(""), "p", "")
	if err != nil {
		t.Fatal(err)
	}
	other, err := svc.CreateProject(ctx, auth.Owner(""), "other", "")
	if err != nil {
		t.Fatal(err)
	}
	a, err := svc.CreateAgent(ctx, auth.Owner(p.ID), "helper")
	if err != nil {
		t.Fatal(err)
	}
	oa, err := svc.CreateAgent(ctx, auth.Owner(other.ID), "stranger")
	if err != nil {
		t.Fatal(err)
	}
	rw := []string{auth.MessagingRead, auth.MessagingWrite}
	return &convWorld{
		svc: svc, st: svc.Store(), project: p.ID,
		user:         &auth.Principal{Kind: auth.KindToken, ProjectID: p.ID, Name: "alice", Scopes: rw},
		reader:       &auth.Principal{Kind: auth.KindToken, ProjectID: p.ID, Name: "reader", Scopes: []string{auth.MessagingRead}},
		agent:        auth.Agent(p.ID, a.ID, a.Name),
		agentID:      a.ID,
		outsider:     &auth.Principal{Kind: auth.KindToken, ProjectID: other.ID, Name: "eve", Scopes: rw},
		otherAgentID: oa.ID,
	}
}

func ptr[T any](v T) *T { return &v }

func wantCode(t *testing.T, err error, code errs.Code) {
	t.Helper()
	if err == nil || errs.CodeOf(err) != code {
		t.Fatalf("error %v, want code %s", err, code)
	}
}

// failedAsWanted checks a table step's error: with a code, the step must fail with it
// (and true says there is nothing more to check); without, it must succeed.
func failedAsWanted(t *testing.T, step string, err error, code errs.Code) bool {
	t.Helper()
	if code != "" {
		if err == nil || errs.CodeOf(err) != code {
			t.Fatalf("%s: error %v, want %s", step, err, code)
		}
		return true
	}
	if err != nil {
		t.Fatalf("%s: %v", step, err)
	}
	return false
}

func (w *convWorld) eventCounts(t *testing.T) map[string]int {
	t.Helper()
	events, err := w.st.Read().EventsSince(context.Background(), w.project, 0, 10000)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int{}
	for _, e := range events {
		out[e.Type]++
	}
	return out
}

func TestParticipants(t *testing.T) { pgtest.Engines(t, testParticipants) }

func testParticipants(t *testing.T, engine string) {
	w := newConvWorld(t, engine)
	ctx := context.Background()
	conv, err := w.svc.CreateConversation(ctx, w.user, service.CreateConversationInput{Message: ptr("hi")}, "")
	if err != nil {
		t.Fatal(err)
	}
	ref := conv.UUID
	names := func(c *model.Conversation) string { return strings.Join(c.Participants, ",") }

	steps := []struct {
		name   string
		add    bool
		in     service.ParticipantInput
		p      *auth.Principal
		want   string    // participants after, when no error
		code   errs.Code // expected error code
		newRef string    // another conversation reference
	}{
		{name: "add a user", add: true, in: service.ParticipantInput{Kind: "user", Name: "bob"}, want: "alice,bob"},
		{name: "add a user twice", add: true, in: service.ParticipantInput{Kind: "user", Name: "bob"}, want: "alice,bob"},
		{name: "add an agent by id", add: true, in: service.ParticipantInput{Kind: "agent", AgentID: &w.agentID}, want: "alice,bob,helper"},
		{name: "add the agent again by name", add: true, in: service.ParticipantInput{Kind: "agent", Name: "helper"}, want: "alice,bob,helper"},
		{name: "agent id and name disagree", add: true, in: service.ParticipantInput{Kind: "agent", AgentID: &w.agentID, Name: "other"}, code: errs.InvalidArgument},
		{name: "unknown agent id", add: true, in: service.ParticipantInput{Kind: "agent", AgentID: ptr(int64(9999))}, code: errs.InvalidArgument},
		{name: "agent of another project", add: true, in: service.ParticipantInput{Kind: "agent", AgentID: &w.otherAgentID}, code: errs.InvalidArgument},
		{name: "unknown agent name", add: true, in: service.ParticipantInput{Kind: "agent", Name: "ghost"}, code: errs.InvalidArgument},
		{name: "agent without id or name", add: true, in: service.ParticipantInput{Kind: "agent"}, code: errs.InvalidArgument},
		{name: "bad kind", add: true, in: service.ParticipantInput{Kind: "robot", Name: "x"}, code: errs.InvalidArgument},
		{name: "blank user", add: true, in: service.ParticipantInput{Kind: "user", Name: " "}, code: errs.InvalidArgument},
		{name: "user name too long", add: true, in: service.ParticipantInput{Kind: "user", Name: strings.Repeat("u", 201)}, code: errs.InvalidArgument},
		{name: "user with an agent id", add: true, in: service.ParticipantInput{Kind: "user", Name: "x", AgentID: &w.agentID}, code: errs.InvalidArgument},
		{name: "read-only caller", add: true, p: w.reader, in: service.ParticipantInput{Kind: "user", Name: "carol"}, code: errs.Forbidden},
		{name: "caller of another project", add: true, p: w.outsider, in: service.ParticipantInput{Kind: "user", Name: "carol"}, code: errs.NotFound},
		{name: "unknown conversation", add: true, newRef: "4242", in: service.ParticipantInput{Kind: "user", Name: "carol"}, code: errs.NotFound},
		{name: "remove a user", in: service.ParticipantInput{Kind: "user", Name: "bob"}, want: "alice,helper"},
		{name: "remove a non-participant", in: service.ParticipantInput{Kind: "user", Name: "bob"}, code: errs.NotFound},
		{name: "remove an agent by name", in: service.ParticipantInput{Kind: "agent", Name: "helper"}, want: "alice"},
		{name: "remove read-only", p: w.reader, in: service.ParticipantInput{Kind: "user", Name: "alice"}, code: errs.Forbidden},
	}
	for _, st := range steps {
		p := w.user
		if st.p != nil {
			p = st.p
		}
		r := ref
		if st.newRef != "" {
			r = st.newRef
		}
		var got *model.Conversation
		var err error
		if st.add {
			got, err = w.svc.AddParticipant(ctx, p, r, st.in)
		} else {
			got, err = w.svc.RemoveParticipant(ctx, p, r, st.in)
		}
		if failedAsWanted(t, st.name, err, st.code) {
			continue
		}
		if names(got) != st.want {
			t.Fatalf("%s: participants %s, want %s", st.name, names(got), st.want)
		}
	}

	// A poster joins; the list gives kinds and agent ids.
	if _, err := w.svc.PostMessage(ctx, w.agent, ref, service.PostMessageInput{Content: ptr("back")}, ""); err != nil {
		t.Fatal(err)
	}
	parts, err := w.svc.Participants(ctx, w.reader, ref)
	if err != nil {
		t.Fatal(err)
	}
	if len(parts) != 2 || parts[0].Kind != "user" || parts[0].Name != "alice" || parts[0].AgentID != nil ||
		parts[1].Kind != "agent" || parts[1].AgentID == nil || *parts[1].AgentID != w.agentID {
		t.Fatalf("participants %+v", parts)
	}
	if _, err := w.svc.Participants(ctx, w.outsider, ref); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("participants from another project: %v", err)
	}

	// One event per actual change: bob, helper, helper again (posting) added; bob and
	// helper removed.
	ev := w.eventCounts(t)
	if ev["participant.added"] != 3 || ev["participant.removed"] != 2 {
		t.Fatalf("events %v", ev)
	}
}

func TestReactions(t *testing.T) { pgtest.Engines(t, testReactions) }

func testReactions(t *testing.T, engine string) {
	w := newConvWorld(t, engine)
	ctx := context.Background()
	conv, err := w.svc.CreateConversation(ctx, w.user, service.CreateConversationInput{Message: ptr("first"), Name: ptr("r")}, "")
	if err != nil {
		t.Fatal(err)
	}
	ref := conv.UUID
	m1, err := w.svc.PostMessage(ctx, w.user, ref, service.PostMessageInput{Message: ptr("one")}, "")
	if err != nil {
		t.Fatal(err)
	}
	m2, err := w.svc.PostMessage(ctx, w.agent, ref, service.PostMessageInput{Message: ptr("two")}, "")
	if err != nil {
		t.Fatal(err)
	}
	counts := func(m *model.Message) string {
		var parts []string
		for _, rc := range m.Reactions {
			parts = append(parts, rc.Emoji+":"+strconv.Itoa(rc.Count))
		}
		return strings.Join(parts, ",")
	}
	steps := []struct {
		name  string
		p     *auth.Principal
		add   bool
		msg   int64
		emoji string
		want  string
		code  errs.Code
	}{
		{name: "user thumbs up", p: w.user, add: true, msg: m1.ID, emoji: "👍", want: "👍:1"},
		{name: "agent thumbs up", p: w.agent, add: true, msg: m1.ID, emoji: "👍", want: "👍:2"},
		{name: "user thumbs up again", p: w.user, add: true, msg: m1.ID, emoji: "👍", want: "👍:2"},
		{name: "user party", p: w.user, add: true, msg: m1.ID, emoji: "🎉", want: "👍:2,🎉:1"},
		{name: "joined sequence", p: w.agent, add: true, msg: m2.ID, emoji: "👩‍💻", want: "👩‍💻:1"},
		{name: "shortcode", p: w.user, add: true, msg: m2.ID, emoji: ":ship:", want: "👩‍💻:1,:ship::1"},
		{name: "remove user thumbs up", p: w.user, msg: m1.ID, emoji: "👍", want: "👍:1,🎉:1"},
		{name: "remove it again", p: w.user, msg: m1.ID, emoji: "👍", want: "👍:1,🎉:1"},
		{name: "blank emoji", p: w.user, add: true, msg: m1.ID, emoji: "", code: errs.InvalidArgument},
		{name: "emoji with a space", p: w.user, add: true, msg: m1.ID, emoji: "a b", code: errs.InvalidArgument},
		{name: "emoji with a control character", p: w.user, add: true, msg: m1.ID, emoji: "x\x07", code: errs.InvalidArgument},
		{name: "emoji too long", p: w.user, add: true, msg: m1.ID, emoji: strings.Repeat("x", 65), code: errs.InvalidArgument},
		{name: "unknown message", p: w.user, add: true, msg: 99999, emoji: "👍", code: errs.NotFound},
		{name: "message of another project", p: w.outsider, add: true, msg: m1.ID, emoji: "👍", code: errs.NotFound},
		{name: "read-only caller", p: w.reader, add: true, msg: m1.ID, emoji: "👍", code: errs.Forbidden},
		{name: "read-only caller removing", p: w.reader, msg: m1.ID, emoji: "👍", code: errs.Forbidden},
	}
	for _, st := range steps {
		var got *model.Message
		var err error
		if st.add {
			got, err = w.svc.AddReaction(ctx, st.p, st.msg, st.emoji)
		} else {
			got, err = w.svc.RemoveReaction(ctx, st.p, st.msg, st.emoji)
		}
		if failedAsWanted(t, st.name, err, st.code) {
			continue
		}
		if counts(got) != st.want {
			t.Fatalf("%s: reactions %s, want %s", st.name, counts(got), st.want)
		}
	}

	// The list carries the counts of every message of the page.
	msgs, more, err := w.svc.ListMessages(ctx, w.reader, ref, service.PageInput{})
	if err != nil || more || len(msgs) != 3 {
		t.Fatalf("list: %v %v %d", err, more, len(msgs))
	}
	if counts(&msgs[0]) != "" || msgs[0].Reactions == nil || counts(&msgs[1]) != "👍:1,🎉:1" || counts(&msgs[2]) != "👩‍💻:1,:ship::1" {
		t.Fatalf("list reactions: %+v", msgs)
	}
	// A page in the middle gets its own counts.
	msgs, more, err = w.svc.ListMessages(ctx, w.reader, ref, service.PageInput{AfterID: msgs[0].ID, Limit: 1})
	if err != nil || !more || len(msgs) != 1 || counts(&msgs[0]) != "👍:1,🎉:1" {
		t.Fatalf("middle page: %v %v %+v", err, more, msgs)
	}
	byID, err := w.svc.ReactionCounts(ctx, w.reader, []int64{m1.ID, m2.ID, m1.ID, conv.ID + 1000})
	if err != nil || len(byID) != 2 || len(byID[m1.ID]) != 2 || len(byID[m2.ID]) != 2 {
		t.Fatalf("reaction counts: %v %v", byID, err)
	}
	if got, err := w.svc.ReactionCounts(ctx, w.outsider, []int64{m1.ID}); err != nil || len(got) != 0 {
		t.Fatalf("counts from another project: %v %v", got, err)
	}
	who, err := w.svc.Reactions(ctx, w.reader, m1.ID)
	if err != nil || len(who) != 2 || who[0].Actor != "helper" || who[0].ActorKind != "agent" || who[1].Emoji != "🎉" || who[1].Actor != "alice" {
		t.Fatalf("reactions of m1: %+v %v", who, err)
	}
	got, err := w.svc.GetMessage(ctx, w.reader, m1.ID)
	if err != nil || counts(got) != "👍:1,🎉:1" {
		t.Fatalf("get message: %+v %v", got, err)
	}

	ev := w.eventCounts(t)
	if ev["reaction.added"] != 5 || ev["reaction.removed"] != 1 {
		t.Fatalf("events %v", ev)
	}
}

func TestConversationInputRules(t *testing.T) { pgtest.Engines(t, testConversationInputRules) }

func testConversationInputRules(t *testing.T, engine string) {
	w := newConvWorld(t, engine)
	ctx := context.Background()
	// Scope is checked before the input.
	_, err := w.svc.CreateConversation(ctx, w.reader, service.CreateConversationInput{}, "")
	wantCode(t, err, errs.Forbidden)
	_, err = w.svc.CreateConversation(ctx, w.user, service.CreateConversationInput{}, "")
	wantCode(t, err, errs.InvalidArgument)
	_, err = w.svc.CreateConversation(ctx, w.user, service.CreateConversationInput{Message: ptr("x"), Name: ptr(strings.Repeat("n", 201))}, "")
	wantCode(t, err, errs.InvalidArgument)
	c, err := w.svc.CreateConversation(ctx, w.user, service.CreateConversationInput{Message: ptr("x"), Name: ptr("  ")}, "")
	if err != nil || c.Name != nil {
		t.Fatalf("blank name: %+v %v", c, err)
	}
	c, err = w.svc.CreateConversation(ctx, w.agent, service.CreateConversationInput{Content: ptr(strings.Repeat("é", service.MaxMessageLen))}, "")
	if err != nil || strings.Join(c.Participants, ",") != "helper" {
		t.Fatalf("agent conversation: %+v %v", c, err)
	}
	_, err = w.svc.PostMessage(ctx, w.user, c.UUID, service.PostMessageInput{Message: ptr("\xff")}, "")
	wantCode(t, err, errs.InvalidArgument)
	_, _, err = w.svc.ListMessages(ctx, w.reader, c.UUID, service.PageInput{Limit: service.MaxListLimit + 1})
	wantCode(t, err, errs.InvalidArgument)
	_, _, err = w.svc.ConversationTasks(ctx, w.reader, c.UUID, service.PageInput{})
	wantCode(t, err, errs.Forbidden)
	_, err = w.svc.GetConversation(ctx, w.outsider, c.UUID)
	wantCode(t, err, errs.NotFound)
	_, err = w.svc.ShareDocument(ctx, w.user, c.UUID, service.DocumentUpload{Name: "big", Body: strings.NewReader(strings.Repeat("x", service.MaxDocumentSize+1))})
	wantCode(t, err, errs.PayloadTooLarge)
	d, err := w.svc.ShareDocument(ctx, w.user, c.UUID, service.DocumentUpload{Name: "", Body: strings.NewReader("")})
	if err != nil || d.Name != "document" || d.Size != 0 || d.MimeType == "" {
		t.Fatalf("empty document: %+v %v", d, err)
	}
	d, content, err := w.svc.GetDocument(ctx, w.reader, c.UUID, d.ID)
	if err != nil || len(content) != 0 || d.URL == "" {
		t.Fatalf("get empty document: %+v %v", d, err)
	}
}

func TestSanitizeDocumentName(t *testing.T) {
	long := strings.Repeat("a", 300)
	cases := map[string]string{
		"report.pdf":             "report.pdf",
		"../../etc/passwd":       "passwd",
		`C:\Users\me\file.txt`:   "file.txt",
		"":                       "document",
		"..":                     "document",
		"  .hidden  ":            "hidden",
		"a\x00b\nc\td.txt":       "ab c d.txt",
		"evil\u202etxt.exe":      "eviltxt.exe",
		"naïve résumé.txt":       "naïve résumé.txt",
		`quote"semi;colon.txt`:   `quote"semi;colon.txt`,
		long + ".txt":            strings.Repeat("a", service.MaxDocumentNameLen-4) + ".txt",
		"bad\xffutf8.txt":        "badutf8.txt",
		"dir/sub/":               "document",
		"trailing dots...":       "trailing dots",
		"tab\there.md":           "tab here.md",
		"emoji 👩‍💻.png":          "emoji 👩‍💻.png",
		"\u200f\u200ertl.txt":    "rtl.txt",
		"name.with.many.dots.gz": "name.with.many.dots.gz",
	}
	for in, want := range cases {
		if got := service.SanitizeDocumentName(in); got != want {
			t.Errorf("SanitizeDocumentName(%q) = %q, want %q", in, got, want)
		}
	}
}

// FuzzSanitizeDocumentName: whatever a client sends, the stored name is valid UTF-8,
// not empty, bounded, without path separators, control or bidirectional characters,
// and sanitising it again changes nothing.
func FuzzSanitizeDocumentName(f *testing.F) {
	for _, seed := range []string{"report.pdf", "../../etc/passwd", `a\b`, "", "..", "\u202etxt.exe", "\xff\xfe", strings.Repeat("é", 300) + ".txt"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in string) {
		got := service.SanitizeDocumentName(in)
		if got == "" || !utf8.ValidString(got) || utf8.RuneCountInString(got) > service.MaxDocumentNameLen {
			t.Fatalf("SanitizeDocumentName(%q) = %q", in, got)
		}
		if strings.ContainsAny(got, "/\\\u202e\u2066") || strings.IndexFunc(got, unicode.IsControl) >= 0 {
			t.Fatalf("SanitizeDocumentName(%q) = %q keeps an unsafe character", in, got)
		}
		if again := service.SanitizeDocumentName(got); again != got {
			t.Fatalf("not idempotent: %q -> %q -> %q", in, got, again)
		}
	})
}
