package service_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// questionWorld is a service on a manual clock, with a project and a task of it.
type questionWorld struct {
	svc   *service.Service
	clock *jobstest.ManualClock
	owner *auth.Principal
}

func newQuestionWorld(t *testing.T, engine string) *questionWorld {
	t.Helper()
	clock := jobstest.NewManualClock(time.Date(2026, 11, 29, 9, 0, 0, 0, time.UTC))
	st := testenv.OpenStore(t, engine, store.Options{Synchronous: "NORMAL"})
	svc := service.New(st, service.Options{Now: clock.Now})
	t.Cleanup(func() {
		svc.Close()
		st.Close()
	})
	p, err := svc.CreateProject(context.Background(), auth.Owner(""), "q", "")
	if err != nil {
		t.Fatal(err)
	}
	return &questionWorld{svc: svc, clock: clock, owner: auth.Owner(p.ID)}
}

func (w *questionWorld) task(t *testing.T) *model.Task {
	t.Helper()
	task, err := w.svc.CreateTask(context.Background(), w.owner, service.CreateTaskInput{Summary: "ship"}, "")
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// ask puts the task in Waiting with question q.
func (w *questionWorld) ask(t *testing.T, id int64, details string, q service.Question) *model.Task {
	t.Helper()
	task, err := w.svc.SetTaskStatus(context.Background(), w.owner, id, model.StatusWaiting, &details, &q, nil)
	if err != nil {
		t.Fatalf("ask %q: %v", details, err)
	}
	return task
}

const form = `{"type":"object","title":"Trip","properties":{
	"name":{"type":"string","title":"Name","minLength":2},
	"email":{"type":"string","format":"email"},
	"seats":{"type":"integer","minimum":1,"maximum":9},
	"class":{"type":"string","enum":["economy","business"]},
	"on":{"type":"string","format":"date"},
	"window":{"type":"boolean","title":"Window seat"}},
	"required":["name","seats"]}`

func TestQuestionIsChecked(t *testing.T) {
	w := newQuestionWorld(t, "sqlite")
	task := w.task(t)
	soon := w.clock.Now().Add(time.Hour)
	past := w.clock.Now().Add(-time.Second)
	fail, def := "fail", "default"
	for _, c := range []struct {
		name   string
		status string
		q      service.Question
		want   string // in the 400's message
	}{
		{"no options", model.StatusWaiting, service.Question{Options: []string{}}, "1 to 10 options"},
		{"eleven options", model.StatusWaiting, service.Question{Options: strings.Split("a,b,c,d,e,f,g,h,i,j,k", ",")}, "1 to 10 options"},
		{"empty option", model.StatusWaiting, service.Question{Options: []string{"Approve", " "}}, "waiting_options[1] is required"},
		{"long option", model.StatusWaiting, service.Question{Options: []string{strings.Repeat("x", 101)}}, "waiting_options[0] is too long"},
		{"option twice", model.StatusWaiting, service.Question{Options: []string{"a", "a"}}, "waiting_options[1]"},
		{"options and schema", model.StatusWaiting, service.Question{Options: []string{"a"}, Schema: json.RawMessage(form)}, "not both"},
		{"schema not an object", model.StatusWaiting, service.Question{Schema: json.RawMessage(`[1]`)}, "waiting_schema must be a JSON object"},
		{"schema of another type", model.StatusWaiting, service.Question{Schema: json.RawMessage(`{"type":"array","properties":{"a":{"type":"string"}}}`)}, "waiting_schema.type"},
		{"schema without fields", model.StatusWaiting, service.Question{Schema: json.RawMessage(`{"type":"object","properties":{}}`)}, "waiting_schema.properties must be"},
		{"nested field", model.StatusWaiting, service.Question{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"object"}}}`)}, "waiting_schema.properties.a.type"},
		{"bad format", model.StatusWaiting, service.Question{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","format":"phone"}}}`)}, "waiting_schema.properties.a.format"},
		{"minimum on a string", model.StatusWaiting, service.Question{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string","minimum":1}}}`)}, "waiting_schema.properties.a.minimum is not allowed"},
		{"bad minimum", model.StatusWaiting, service.Question{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"number","minimum":"1"}}}`)}, "waiting_schema.properties.a.minimum must be a number"},
		{"required not a field", model.StatusWaiting, service.Question{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"required":["b"]}`)}, "waiting_schema.required[0]"},
		{"unknown key", model.StatusWaiting, service.Question{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"string"}},"oneOf":[]}`)}, "waiting_schema.oneOf is not allowed"},
		{"bad field default", model.StatusWaiting, service.Question{Schema: json.RawMessage(`{"type":"object","properties":{"a":{"type":"boolean","default":"yes"}}}`)}, "waiting_schema.properties.a.default must be true or false"},
		{"deadline past", model.StatusWaiting, service.Question{ExpiresAt: &past}, "not in the future"},
		{"on expiry without deadline", model.StatusWaiting, service.Question{OnExpiry: &fail}, "need waiting_expires_at"},
		{"bad on expiry", model.StatusWaiting, service.Question{ExpiresAt: &soon, OnExpiry: ptr("wait")}, `waiting_on_expiry "wait"`},
		{"default without answer", model.StatusWaiting, service.Question{ExpiresAt: &soon, OnExpiry: &def}, "needs waiting_default"},
		{"answer without default", model.StatusWaiting, service.Question{ExpiresAt: &soon, Default: json.RawMessage(`"x"`)}, "only with waiting_on_expiry default"},
		{"default not an option", model.StatusWaiting, service.Question{Options: []string{"Yes"}, ExpiresAt: &soon, OnExpiry: &def, Default: json.RawMessage(`"No"`)}, `waiting_default is not an answer to the question: choice "No"`},
		{"default not filling the form", model.StatusWaiting, service.Question{Schema: json.RawMessage(form), ExpiresAt: &soon, OnExpiry: &def, Default: json.RawMessage(`{"name":"Al"}`)}, "seats is required"},
		{"bad ask", model.StatusWaiting, service.Question{Ask: ptr("Dana <dana@example.com>")}, "waiting_ask"},
		{"question while Doing", model.StatusDoing, service.Question{Options: []string{"a"}}, "for status Waiting, not Doing"},
	} {
		_, err := w.svc.SetTaskStatus(context.Background(), w.owner, task.ID, c.status, nil, &c.q, nil)
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != errs.InvalidArgument || !strings.Contains(e.Message, c.want) {
			t.Errorf("%s: got %v, want a 400 saying %q", c.name, err, c.want)
		}
	}
}

func TestQuestionIsCarriedWhileWaiting(t *testing.T) {
	pgtest.Engines(t, testQuestionIsCarriedWhileWaiting)
}

func testQuestionIsCarriedWhileWaiting(t *testing.T, engine string) {
	w := newQuestionWorld(t, engine)
	ctx := context.Background()
	task := w.task(t)
	at := w.clock.Now().Add(90 * time.Minute)
	asked := w.ask(t, task.ID, "Ship it?", service.Question{Options: []string{"Approve", "Reject"}, ExpiresAt: &at,
		OnExpiry: ptr("default"), Default: json.RawMessage(` "Reject" `), Ask: ptr("Dana@Example.com")})
	got, err := w.svc.GetTask(ctx, w.owner, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	for _, tk := range []*model.Task{asked, got} {
		if strings.Join(tk.WaitingOptions, "|") != "Approve|Reject" || !tk.WaitingExpiresAt.Equal(at) || *tk.WaitingOnExpiry != "default" ||
			string(tk.WaitingDefault) != `"Reject"` || *tk.WaitingAsk != "dana@example.com" || tk.WaitingVersion != 1 {
			t.Fatalf("question as carried: %+v", tk)
		}
	}
	// The same question again is not a new one; another one is, even with the same text.
	if again := w.ask(t, task.ID, "Ship it?", service.Question{Options: []string{"Approve", "Reject"}, ExpiresAt: &at,
		OnExpiry: ptr("default"), Default: json.RawMessage(`"Reject"`), Ask: ptr("dana@example.com")}); again.WaitingVersion != 1 {
		t.Fatalf("the same question: waiting_version %d, want 1", again.WaitingVersion)
	}
	other := w.ask(t, task.ID, "Ship it?", service.Question{Options: []string{"Approve", "Reject", "Later"}})
	if other.WaitingVersion != 2 || other.WaitingExpiresAt != nil || other.WaitingAsk != nil {
		t.Fatalf("another question: %+v, want version 2 and only the new structure", other)
	}
	// Text alone replaces the structure too.
	text := w.ask(t, task.ID, "Anything else?", service.Question{})
	if text.WaitingVersion != 3 || text.WaitingOptions != nil {
		t.Fatalf("a text question: version %d, options %v", text.WaitingVersion, text.WaitingOptions)
	}
	w.ask(t, task.ID, "Form", service.Question{Schema: json.RawMessage(form)})
	done, err := w.svc.SetTaskStatus(ctx, w.owner, task.ID, model.StatusDone, nil, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if done.WaitingSchema != nil || done.WaitingOptions != nil || done.WaitingDetails != nil {
		t.Fatalf("a Done task still carries its question: %+v", done)
	}
	b, _ := json.Marshal(done)
	for _, f := range []string{"waiting_options", "waiting_schema", "waiting_expires_at", "waiting_on_expiry", "waiting_default", "waiting_ask"} {
		if !strings.Contains(string(b), `"`+f+`":null`) {
			t.Errorf("a Done task's JSON lacks %s: null: %s", f, b)
		}
	}
}

func TestRespondWithChoiceOrData(t *testing.T) { pgtest.Engines(t, testRespondWithChoiceOrData) }

func testRespondWithChoiceOrData(t *testing.T, engine string) {
	w := newQuestionWorld(t, engine)
	ctx := context.Background()
	respond := func(id int64, in service.RespondInput) (*model.Task, error) {
		return w.svc.Respond(ctx, w.owner, id, in, "", nil)
	}
	invalid := func(err error, want string) {
		t.Helper()
		var e *errs.Error
		if !errors.As(err, &e) || e.Code != errs.InvalidArgument || !strings.Contains(e.Message, want) {
			t.Fatalf("got %v, want a 400 saying %q", err, want)
		}
	}

	choice := w.task(t)
	w.ask(t, choice.ID, "Ship it?", service.Question{Options: []string{"Approve", "Reject"}})
	_, err := respond(choice.ID, service.RespondInput{Choice: ptr("Maybe")})
	invalid(err, `choice "Maybe" is not one of the options: Approve, Reject`)
	_, err = respond(choice.ID, service.RespondInput{Choice: ptr("Approve"), Response: "yes"})
	invalid(err, "give one of response, choice and data")
	_, err = respond(choice.ID, service.RespondInput{})
	invalid(err, "response is required")
	_, err = respond(choice.ID, service.RespondInput{Data: map[string]any{"a": 1}})
	invalid(err, "data answers a question with waiting_schema")
	answered, err := respond(choice.ID, service.RespondInput{Choice: ptr("Approve"), WaitingVersion: ptr(int64(1))})
	if err != nil {
		t.Fatal(err)
	}
	last := answered.Conversation[len(answered.Conversation)-1]
	if answered.Status != model.StatusDoing || last.Content != "Approve" || last.Question != "Ship it?" || last.Data != nil {
		t.Fatalf("answered by a choice: status %s, entry %+v", answered.Status, last)
	}

	formTask := w.task(t)
	w.ask(t, formTask.ID, "Book it", service.Question{Schema: json.RawMessage(form)})
	_, err = respond(formTask.ID, service.RespondInput{Choice: ptr("Approve")})
	invalid(err, "has none: send response")
	_, err = respond(formTask.ID, service.RespondInput{Data: map[string]any{"name": "A", "seats": 1.5, "email": "nope", "on": "29/11", "class": "first", "pet": "cat", "window": "yes"}})
	for _, want := range []string{"name must be at least 2 characters", "seats must be a whole number", "email must be an email address",
		"on must be a date", "class must be one of economy, business", "pet is not a field", "window must be true or false"} {
		invalid(err, want)
	}
	_, err = respond(formTask.ID, service.RespondInput{Data: map[string]any{"name": "", "window": true}})
	invalid(err, "name is required; seats is required")
	answered, err = respond(formTask.ID, service.RespondInput{Data: map[string]any{"seats": float64(2), "name": "Ada", "window": true, "on": "2026-12-24"}})
	if err != nil {
		t.Fatal(err)
	}
	last = answered.Conversation[len(answered.Conversation)-1]
	if last.Content != "Name: Ada\nseats: 2\non: 2026-12-24\nWindow seat: yes" {
		t.Fatalf("the form's readable content: %q", last.Content)
	}
	var data map[string]any
	if err := json.Unmarshal(last.Data, &data); err != nil || data["name"] != "Ada" || data["seats"] != float64(2) || data["window"] != true {
		t.Fatalf("the form's data: %s (%v)", last.Data, err)
	}
	// Stored as answered.
	got, err := w.svc.GetTask(ctx, w.owner, formTask.ID)
	if err != nil {
		t.Fatal(err)
	}
	if stored := got.Conversation[len(got.Conversation)-1]; string(stored.Data) != string(last.Data) {
		t.Fatalf("stored data %s, answered %s", stored.Data, last.Data)
	}

	// Text answers any question.
	text := w.task(t)
	w.ask(t, text.ID, "Ship it?", service.Question{Options: []string{"Approve", "Reject"}})
	if _, err := respond(text.ID, service.RespondInput{Response: "Neither: wait for Monday"}); err != nil {
		t.Fatal(err)
	}
}

func TestQuestionDeadline(t *testing.T) { pgtest.Engines(t, testQuestionDeadline) }

func testQuestionDeadline(t *testing.T, engine string) {
	w := newQuestionWorld(t, engine)
	ctx := context.Background()
	at := w.clock.Now().Add(10 * time.Minute)
	failing, defaulted, answered, schema := w.task(t), w.task(t), w.task(t), w.task(t)
	w.ask(t, failing.ID, "Ship it?", service.Question{Options: []string{"Approve", "Reject"}, ExpiresAt: &at})
	w.ask(t, defaulted.ID, "Ship it?", service.Question{Options: []string{"Approve", "Reject"}, ExpiresAt: &at, OnExpiry: ptr("default"), Default: json.RawMessage(`"Reject"`)})
	w.ask(t, answered.ID, "Ship it?", service.Question{ExpiresAt: &at})
	w.ask(t, schema.ID, "Book it", service.Question{Schema: json.RawMessage(form), ExpiresAt: &at, OnExpiry: ptr("default"), Default: json.RawMessage(`{"name":"Ada","seats":1}`)})
	if _, err := w.svc.Respond(ctx, w.owner, answered.ID, service.RespondInput{Response: "yes"}, "", nil); err != nil {
		t.Fatal(err)
	}
	status := func(id int64) *model.Task {
		t.Helper()
		task, err := w.svc.GetTask(ctx, w.owner, id)
		if err != nil {
			t.Fatal(err)
		}
		return task
	}

	w.clock.Advance(10*time.Minute - time.Millisecond)
	if err := w.svc.ExpireQuestions(ctx); err != nil {
		t.Fatal(err)
	}
	if s := status(failing.ID).Status; s != model.StatusWaiting {
		t.Fatalf("before the deadline: %s", s)
	}
	w.clock.Advance(time.Millisecond)
	for range 2 { // the second pass finds nothing to do
		if err := w.svc.ExpireQuestions(ctx); err != nil {
			t.Fatal(err)
		}
	}
	f := status(failing.ID)
	if f.Status != model.StatusFailed || len(f.Conversation) != 1 || !strings.Contains(f.Conversation[0].Content, "Nobody answered") ||
		f.Conversation[0].Author != service.TimeoutAuthor || f.WaitingExpiresAt != nil {
		t.Fatalf("failed at the deadline: %s, %+v", f.Status, f.Conversation)
	}
	d := status(defaulted.ID)
	if d.Status != model.StatusDoing || len(d.Conversation) != 1 || d.Conversation[0].Content != "Reject" || d.Conversation[0].Author != service.TimeoutAuthor {
		t.Fatalf("answered by default at the deadline: %s, %+v", d.Status, d.Conversation)
	}
	s := status(schema.ID)
	if s.Status != model.StatusDoing || s.Conversation[0].Content != "Name: Ada\nseats: 1" || string(s.Conversation[0].Data) != `{"name":"Ada","seats":1}` {
		t.Fatalf("a form answered by default: %s, %+v", s.Status, s.Conversation)
	}
	if a := status(answered.ID); a.Status != model.StatusDoing || len(a.Conversation) != 1 {
		t.Fatalf("an answered question fired: %s, %+v", a.Status, a.Conversation)
	}
}

// TestPeopleAsked: waiting_ask, else the task's creator (while a member who may write
// tasks), else every member who may write tasks; a viewer is never asked.
func TestPeopleAsked(t *testing.T) {
	w := newQuestionWorld(t, "sqlite")
	ctx := context.Background()
	admin := &auth.Principal{Kind: auth.KindToken, ProjectID: w.owner.ProjectID, Name: "admin", Scopes: service.RoleScopes(model.RoleAdmin)}
	member := func(email, role string) *auth.Principal {
		m, err := w.svc.AddMember(ctx, admin, service.AddMemberInput{Email: email, Role: role})
		if err != nil {
			t.Fatal(err)
		}
		return &auth.Principal{Kind: auth.KindUser, ProjectID: w.owner.ProjectID, Name: m.Name, UserID: m.UserID, Role: role, Scopes: service.RoleScopes(role)}
	}
	ann, bob, vic := member("ann@example.com", model.RoleMember), member("bob@example.com", model.RoleAdmin), member("vic@example.com", model.RoleViewer)
	byAnn, err := w.svc.CreateTask(ctx, ann, service.CreateTaskInput{Summary: "ann's"}, "")
	if err != nil {
		t.Fatal(err)
	}
	byOwner := w.task(t)
	named := w.task(t)
	w.ask(t, byAnn.ID, "?", service.Question{})
	w.ask(t, byOwner.ID, "?", service.Question{})
	w.ask(t, named.ID, "?", service.Question{Ask: ptr("Vic@example.com")})
	people := func(id int64) string {
		task, err := w.svc.GetTask(ctx, w.owner, id)
		if err != nil {
			t.Fatal(err)
		}
		emails, err := w.svc.PeopleAsked(ctx, task)
		if err != nil {
			t.Fatal(err)
		}
		return strings.Join(emails, ",")
	}
	if got := people(byAnn.ID); got != "ann@example.com" {
		t.Errorf("a task ann created asks %q, want ann", got)
	}
	if got := people(byOwner.ID); got != "ann@example.com,bob@example.com" {
		t.Errorf("a task nobody's asks %q, want every member who may write with an email", got)
	}
	if got := people(named.ID); got != "vic@example.com" {
		t.Errorf("a task naming vic asks %q", got)
	}
	asksYou := func(p *auth.Principal) string {
		list, err := w.svc.WaitingForList(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		var ids []string
		for _, wf := range list {
			if wf.AsksYou {
				ids = append(ids, itoa(wf.ID))
			}
		}
		return strings.Join(ids, ",")
	}
	if got, want := asksYou(ann), itoa(byAnn.ID)+","+itoa(byOwner.ID); got != want {
		t.Errorf("asks ann: %s, want %s", got, want)
	}
	if got, want := asksYou(bob), itoa(byOwner.ID); got != want {
		t.Errorf("asks bob: %s, want %s", got, want)
	}
	if got := asksYou(vic); got != "" {
		t.Errorf("asks vic, a viewer: %s, want none (a viewer answers nothing, even when named)", got)
	}
	// Ann leaves: her task asks everyone who may write.
	if err := w.svc.RemoveMember(ctx, admin, ann.UserID); err != nil {
		t.Fatal(err)
	}
	if got := people(byAnn.ID); got != "bob@example.com" {
		t.Errorf("after ann left, her task asks %q, want bob", got)
	}
}
