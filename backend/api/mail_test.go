package api_test

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"github.com/agentdesk/agentdesk/backend/mail"
	"github.com/agentdesk/agentdesk/backend/mail/mailtest"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// mailEnv is a server that emails questions through smtpURL, with a member who may
// answer (alice) and a viewer who may not (vic), and an agent's task to ask on.
func mailEnv(t *testing.T, engine, smtpURL string, clock *jobstest.ManualClock) (*testenv.Env, *model.Task) {
	t.Helper()
	cfg, err := mail.ParseConfig(smtpURL, "Agentdesk <agentdesk@example.com>")
	if err != nil {
		t.Fatal(err)
	}
	sc := server.Config{SMTP: cfg}
	if clock != nil {
		sc.Clock = clock
	}
	e := testenv.StartWithOn(t, engine, sc)
	ctx := context.Background()
	owner := auth.Owner(e.Project.ID)
	for _, m := range []service.AddMemberInput{
		{Name: "Alice", Email: "alice@example.com", Role: model.RoleMember},
		{Name: "Vic", Email: "vic@example.com", Role: model.RoleViewer},
	} {
		if _, err := e.Service.AddMember(ctx, owner, m); err != nil {
			t.Fatal(err)
		}
	}
	agent := e.Agent(t, e.Project.ID, "builder")
	task, err := e.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "Ship v2", AgentID: &agent.ID}, "")
	if err != nil {
		t.Fatal(err)
	}
	return e, task
}

func ask(t *testing.T, e *testenv.Env, taskID int64, question string) {
	t.Helper()
	if _, err := e.Service.SetTaskStatus(context.Background(), auth.Owner(e.Project.ID), taskID, model.StatusWaiting, &question, nil, nil); err != nil {
		t.Fatal(err)
	}
}

func loadTask(t *testing.T, e *testenv.Env, id int64) *model.Task {
	t.Helper()
	task, err := e.Service.GetTask(context.Background(), auth.Owner(e.Project.ID), id)
	if err != nil {
		t.Fatal(err)
	}
	return task
}

// page GETs or POSTs (with form) an email's link, as a browser would.
func page(t *testing.T, method, link string, form url.Values) (int, string) {
	t.Helper()
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequest(method, link, body)
	if err != nil {
		t.Fatal(err)
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// TestQuestionEmail: a question is emailed once to the member asked (not the viewer);
// its link's GET answers nothing, the POST from its page answers as that member, a
// second click answers nothing, nor does the link of a question that moved on, and
// each says why. Admins see the sends.
func TestQuestionEmail(t *testing.T) { pgtest.Engines(t, testQuestionEmail) }

func testQuestionEmail(t *testing.T, engine string) {
	smtpd := mailtest.Start(t)
	e, task := mailEnv(t, engine, smtpd.URL(), nil)
	ask(t, e, task.ID, "Deploy to production now?")

	msg := smtpd.Next(t, 20*time.Second)
	if msg.To != "alice@example.com" || msg.From != "agentdesk@example.com" || !strings.Contains(msg.Subject, "Ship v2") {
		t.Fatalf("email to %s from %s, subject %q", msg.To, msg.From, msg.Subject)
	}
	if !strings.Contains(msg.Text, "Deploy to production now?") || !strings.Contains(msg.Text, "builder") {
		t.Fatalf("email text lacks the question or the agent:\n%s", msg.Text)
	}
	links := msg.Links()
	if len(links) != 2 || !strings.HasPrefix(links[0], e.URL+service.MailPath) || links[1] != fmt.Sprintf("%s/tasks/%d", e.URL, task.ID) {
		t.Fatalf("links %v, want the question's under %s%s, then the task's", links, e.URL, service.MailPath)
	}
	link := links[0]

	// Following the link (as a mail scanner does) answers nothing.
	status, body := page(t, http.MethodGet, link, nil)
	if status != http.StatusOK || !strings.Contains(body, "Deploy to production now?") || !strings.Contains(body, `<form method="post">`) {
		t.Fatalf("GET %d:\n%s", status, body)
	}
	if got := loadTask(t, e, task.ID); got.Status != model.StatusWaiting {
		t.Fatalf("after GET the task is %s, want still Waiting", got.Status)
	}

	// An empty answer is refused, and the form shown again.
	if status, body = page(t, http.MethodPost, link, url.Values{"response": {"  "}}); status != http.StatusBadRequest || !strings.Contains(body, "response is required") {
		t.Fatalf("empty POST %d:\n%s", status, body)
	}

	// The click on the page answers, as Alice.
	status, body = page(t, http.MethodPost, link, url.Values{"response": {"Yes, go ahead"}})
	if status != http.StatusOK || !strings.Contains(body, "Your answer is in") {
		t.Fatalf("POST %d:\n%s", status, body)
	}
	answered := loadTask(t, e, task.ID)
	last := answered.Conversation[len(answered.Conversation)-1]
	if answered.Status != model.StatusDoing || last.Content != "Yes, go ahead" || !strings.Contains(last.Author, "Alice") {
		t.Fatalf("task %s, last entry %+v; want Doing, answered by Alice", answered.Status, last)
	}

	// A second click answers nothing, and says why.
	status, body = page(t, http.MethodPost, link, url.Values{"response": {"No, wait"}})
	if status != http.StatusGone || !strings.Contains(body, "used already") {
		t.Fatalf("second POST %d:\n%s", status, body)
	}
	if got := loadTask(t, e, task.ID); got.Version != answered.Version {
		t.Fatalf("the second click changed the task (version %d -> %d)", answered.Version, got.Version)
	}

	// A new question gets a new email; once it is answered elsewhere, its link answers
	// nothing.
	ask(t, e, task.ID, "Also tag the release?")
	second := smtpd.Next(t, 20*time.Second)
	if !strings.Contains(second.Text, "Also tag the release?") {
		t.Fatalf("second email:\n%s", second.Text)
	}
	moved := loadTask(t, e, task.ID)
	v := moved.WaitingVersion
	if _, err := e.Service.Respond(context.Background(), auth.Owner(e.Project.ID), task.ID, service.RespondInput{Response: "yes", WaitingVersion: &v}, "", nil); err != nil {
		t.Fatal(err)
	}
	for _, method := range []string{http.MethodGet, http.MethodPost} {
		status, body = page(t, method, second.Links()[0], url.Values{"response": {"late"}})
		if status != http.StatusGone || !strings.Contains(body, "answered or withdrawn") {
			t.Fatalf("%s of a link whose question moved on: %d\n%s", method, status, body)
		}
	}

	// A token nobody was sent is not known.
	if status, _ = page(t, http.MethodGet, e.URL+service.MailPath+"nosuchtoken", nil); status != http.StatusNotFound {
		t.Fatalf("unknown link: %d", status)
	}

	// Admins see the two sends, to Alice only.
	var out struct {
		Data struct {
			MailSends []struct {
				Recipient, Status, LastError string
				WaitingVersion               int64
			}
		}
	}
	resp := e.Do(t, testenv.Request{Method: http.MethodPost, Path: "/graphql", Token: e.Token(t, e.Project.ID, auth.Admin),
		Body: map[string]string{"query": "{ mailSends { recipient status lastError waitingVersion } }"}})
	resp.JSON(t, &out)
	if len(out.Data.MailSends) != 2 {
		t.Fatalf("mailSends: %s", resp.Body)
	}
	for _, m := range out.Data.MailSends {
		if m.Recipient != "alice@example.com" || m.Status != "sent" {
			t.Fatalf("mailSends: %s", resp.Body)
		}
	}
	resp = e.Do(t, testenv.Request{Method: http.MethodPost, Path: "/graphql", Token: e.Token(t, e.Project.ID, auth.TaskRead),
		Body: map[string]string{"query": "{ mailSends { recipient } }"}})
	if !strings.Contains(string(resp.Body), "forbidden") {
		t.Fatalf("mailSends without admin: %s", resp.Body)
	}
}

// TestQuestionEmailRetried: a mail server that refuses the message delays no write; the
// send is retried after WebhookBackoff's first wait and then goes out, its failure
// visible meanwhile.
func TestQuestionEmailRetried(t *testing.T) {
	smtpd := mailtest.Start(t)
	smtpd.Refuse(true)
	clock := jobstest.NewManualClock(time.Now())
	e, task := mailEnv(t, "sqlite", smtpd.URL(), clock)
	ask(t, e, task.ID, "Which region?")

	admin := auth.Owner(e.Project.ID)
	waitFor(t, "a refused attempt recorded", func() bool {
		list, err := e.Service.MailSends(context.Background(), admin, 10)
		if err != nil {
			t.Fatal(err)
		}
		return len(list) == 1 && list[0].Attempts == 1 && strings.Contains(list[0].LastError, "451") && list[0].Status == "queued"
	})
	smtpd.Refuse(false)
	clock.Advance(service.WebhookBackoff[0])
	msg := smtpd.Next(t, 20*time.Second)
	if !strings.Contains(msg.Text, "Which region?") || smtpd.Attempts() != 2 {
		t.Fatalf("after the retry: %d attempts, email:\n%s", smtpd.Attempts(), msg.Text)
	}
	// The outcome is recorded once the server has taken the message.
	waitFor(t, "the send recorded as sent", func() bool {
		list, _ := e.Service.MailSends(context.Background(), admin, 10)
		return len(list) == 1 && list[0].Status == "sent" && list[0].LastError == "" && list[0].Attempts == 2
	})
}

// TestQuestionEmailServerHangs: with a mail server that takes the connection and never
// answers, questions are still asked and answered while the send hangs: no write
// waits for the mail.
func TestQuestionEmailServerHangs(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted := make(chan net.Conn, 10)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		close(accepted)
		for c := range accepted {
			c.Close()
		}
	})
	e, task := mailEnv(t, "sqlite", "smtp://"+ln.Addr().String(), nil)
	ask(t, e, task.ID, "First?")
	var conn net.Conn
	select {
	case conn = <-accepted:
	case <-time.After(20 * time.Second):
		t.Fatal("the mail server was never called")
	}
	// The send is stuck in the SMTP greeting; writes go on.
	task2, err := e.Service.CreateTask(context.Background(), auth.Owner(e.Project.ID), service.CreateTaskInput{Summary: "Another"}, "")
	if err != nil {
		t.Fatal(err)
	}
	ask(t, e, task2.ID, "Second?")
	v := loadTask(t, e, task.ID).WaitingVersion
	if _, err := e.Service.Respond(context.Background(), auth.Owner(e.Project.ID), task.ID, service.RespondInput{Response: "ok", WaitingVersion: &v}, "", nil); err != nil {
		t.Fatal(err)
	}
	// ... all while the first send still holds its connection, unanswered.
	_ = conn.SetReadDeadline(time.Now().Add(100 * time.Millisecond))
	if _, err := conn.Read(make([]byte, 1)); err == io.EOF {
		t.Fatal("the writes were done only once the send had given up: they waited for the mail server")
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
