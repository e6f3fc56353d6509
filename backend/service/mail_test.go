package service_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/jobs/jobstest"
	"github.com/agentdesk/agentdesk/backend/mail"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// outbox keeps the emails "sent" to it.
type outbox struct{ sent []mail.Message }

func (o *outbox) Send(_ context.Context, m mail.Message) error {
	o.sent = append(o.sent, m)
	return nil
}

// tokenOf is the token of the link after label ("Approve: URL") in an email.
func tokenOf(t *testing.T, text, label string) string {
	t.Helper()
	_, rest, ok := strings.Cut(text, label)
	if !ok {
		t.Fatalf("no %q in:\n%s", label, text)
	}
	_, rest, _ = strings.Cut(rest, service.MailPath)
	token, _, _ := strings.Cut(rest, "\n")
	return token
}

// TestMailOptionsAndDeadline: with options, the email has a link per option (one click
// on its page answers with that option) and one that opens the question; a question's
// links stop answering at its deadline; a send whose question ended before it went out
// is dropped, unsent. The mail work is driven by hand here (no SMTP server; the jobs
// do not run it).
func TestMailOptionsAndDeadline(t *testing.T) {
	clock := jobstest.NewManualClock(time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC))
	deadline := clock.Now().Add(time.Hour)
	e := testenv.StartWith(t, server.Config{Clock: clock})
	ctx := context.Background()
	svc := e.Service
	owner := auth.Owner(e.Project.ID)
	if _, err := svc.AddMember(ctx, owner, service.AddMemberInput{Name: "Alice", Email: "alice@example.com", Role: model.RoleAdmin}); err != nil {
		t.Fatal(err)
	}
	task, err := svc.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "Release"}, "")
	if err != nil {
		t.Fatal(err)
	}
	box := &outbox{}
	// deliver queues the new questions' sends and attempts every due one.
	deliver := func() {
		t.Helper()
		if err := svc.QueueQuestionMail(ctx); err != nil {
			t.Fatal(err)
		}
		ids, err := svc.DueMail(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for _, id := range ids {
			if err := svc.DeliverMail(ctx, id, box, "https://desk.example.com/"); err != nil {
				t.Fatal(err)
			}
		}
	}
	askNow := func(q string) {
		t.Helper()
		question := &service.Question{Options: []string{"Approve", "Reject"}, ExpiresAt: &deadline}
		if _, err := svc.SetTaskStatus(ctx, owner, task.ID, model.StatusWaiting, &q, question, nil); err != nil {
			t.Fatal(err)
		}
	}

	askNow("Release 2.0?")
	deliver()
	deliver() // nothing new: one email per person per question
	if len(box.sent) != 1 {
		t.Fatalf("%d emails, want 1", len(box.sent))
	}
	text := box.sent[0].Text
	if strings.Count(text, "https://desk.example.com"+service.MailPath) != 3 || !strings.Contains(text, "until 2026-03-01 10:00 UTC") {
		t.Fatalf("want a link per option, one to open the question, and the deadline:\n%s", text)
	}
	reject := tokenOf(t, text, "Reject: ")
	q, err := svc.MailLink(ctx, reject)
	if err != nil || q.Option != "Reject" || q.Closed != "" {
		t.Fatalf("the Reject link shows %+v, %v", q, err)
	}
	if q, err = svc.AnswerByMail(ctx, reject, service.MailAnswer{}); err != nil || !q.Answered {
		t.Fatalf("answer by the Reject link: %+v, %v", q, err)
	}
	got, _ := svc.GetTask(ctx, owner, task.ID)
	if last := got.Conversation[len(got.Conversation)-1]; got.Status != model.StatusDoing || last.Content != "Reject" {
		t.Fatalf("task %s, answer %q; want Doing, Reject", got.Status, last.Content)
	}

	// The next question: its links stop at its deadline.
	askNow("Release 2.1?")
	deliver()
	approve := tokenOf(t, box.sent[1].Text, "Approve: ")
	clock.Set(deadline)
	if q, err = svc.AnswerByMail(ctx, approve, service.MailAnswer{}); err != nil || q.Answered || !strings.Contains(q.Closed, "expired") {
		t.Fatalf("answer after the deadline: %+v, %v", q, err)
	}
	if got, _ := svc.GetTask(ctx, owner, task.ID); got.Status == model.StatusDoing {
		t.Fatalf("an expired link answered: the task is %s", got.Status)
	}

	// A question answered before its email goes out: dropped, never sent.
	deadline = clock.Now().Add(time.Hour)
	askNow("Release 2.2?")
	if err := svc.QueueQuestionMail(ctx); err != nil {
		t.Fatal(err)
	}
	v := mustTask(t, svc, owner, task.ID).WaitingVersion
	if _, err := svc.Respond(ctx, owner, task.ID, service.RespondInput{Response: "no", WaitingVersion: &v}, "", nil); err != nil {
		t.Fatal(err)
	}
	deliver()
	sends, err := svc.MailSends(ctx, owner, 10)
	if err != nil {
		t.Fatal(err)
	}
	if len(box.sent) != 2 || sends[0].Status != store.MailDropped || !strings.Contains(sends[0].LastError, "answered") {
		t.Fatalf("%d emails; newest send %+v", len(box.sent), sends[0])
	}
}

func mustTask(t *testing.T, svc *service.Service, p *auth.Principal, id int64) *model.Task {
	t.Helper()
	task, err := svc.GetTask(context.Background(), p, id)
	if err != nil {
		t.Fatal(err)
	}
	return task
}
