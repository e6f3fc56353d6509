package cluster_test

import (
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// TestQuestionDeadlineFiresOnce: a question's deadline, reached while two servers share
// the database, is acted on once: the default answer joins the conversation once, the
// task moves once. Both servers' runners look every second, and here both servers are
// also told to look many times at once when it comes.
func TestQuestionDeadlineFiresOnce(t *testing.T) {
	a, b := twoServers(t)
	ctx := context.Background()
	owner := auth.Owner(a.Project.ID)
	var tasks []int64
	at := time.Now().Add(1500 * time.Millisecond)
	for range 5 {
		task, err := a.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "ship"}, "")
		if err != nil {
			t.Fatal(err)
		}
		details, onExpiry := "Ship it?", service.OnExpiryDefault
		if _, err := b.Service.SetTaskStatus(ctx, owner, task.ID, model.StatusWaiting, &details, &service.Question{
			Options: []string{"Approve", "Reject"}, ExpiresAt: &at, OnExpiry: &onExpiry, Default: json.RawMessage(`"Reject"`)}, nil); err != nil {
			t.Fatal(err)
		}
		tasks = append(tasks, task.ID)
	}
	time.Sleep(time.Until(at))
	var wg sync.WaitGroup
	for i := range 8 {
		svc := []*service.Service{a.Service, b.Service}[i%2]
		wg.Go(func() {
			if err := svc.ExpireQuestions(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	time.Sleep(1500 * time.Millisecond) // and a pass of each runner
	for _, id := range tasks {
		task, err := a.Service.GetTask(ctx, owner, id)
		if err != nil {
			t.Fatal(err)
		}
		if task.Status != model.StatusDoing || len(task.Conversation) != 1 || task.Conversation[0].Content != "Reject" {
			t.Fatalf("task %d after its deadline: %s, conversation %+v; want Doing with the one default answer", id, task.Status, task.Conversation)
		}
	}
}
