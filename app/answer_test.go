package app

import (
	"context"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestAnswerFromNotification: an option pressed on a notification answers the question
// it was shown for, through the service, as the local owner in the UI; once the question
// has moved on (another waiting_version), an older notification's button changes nothing.
func TestAnswerFromNotification(t *testing.T) {
	env := testenv.Start(t)
	ctx := context.Background()
	owner := auth.Owner(env.Project.ID)
	task, err := env.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "release"}, "")
	if err != nil {
		t.Fatal(err)
	}
	ask := func(text string) *model.Task {
		t.Helper()
		w, err := env.Service.SetTaskStatus(ctx, owner, task.ID, model.StatusWaiting, &text, &service.Question{Options: []string{"Approve", "Reject"}}, nil)
		if err != nil {
			t.Fatal(err)
		}
		return w
	}
	first := ask("Ship it?")
	second := ask("Ship it now?") // the first notification's question has moved on
	answerFromNotification(env.Service, Question{ProjectID: env.Project.ID, TaskID: task.ID, WaitingVersion: first.WaitingVersion, Options: first.WaitingOptions}, "Approve")
	if got, _ := env.Service.GetTask(ctx, owner, task.ID); got.Status != model.StatusWaiting {
		t.Fatalf("an older question's button answered the newer one: %s", got.Status)
	}
	answerFromNotification(env.Service, Question{ProjectID: env.Project.ID, TaskID: task.ID, WaitingVersion: second.WaitingVersion, Options: second.WaitingOptions}, "Reject")
	got, err := env.Service.GetTask(ctx, owner, task.ID)
	if err != nil {
		t.Fatal(err)
	}
	last := got.Conversation[len(got.Conversation)-1]
	if got.Status != model.StatusDoing || last.Content != "Reject" {
		t.Fatalf("after Reject: %s, last entry %+v", got.Status, last)
	}
	acts, err := env.Service.Activity(ctx, owner, service.ActivityInput{Limit: 1})
	if err != nil || len(acts) != 1 || acts[0].Via != "ui" || acts[0].ActorKind != "owner" {
		t.Fatalf("the answer's activity: %+v %v; want the owner through the UI", acts, err)
	}
}
