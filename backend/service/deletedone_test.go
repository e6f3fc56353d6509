package service_test

import (
	"context"
	"fmt"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
)

// TestDeleteDoneInBatches: DeleteDoneTasks removes every Done task, in writes of at most
// deleteDoneBatch (5 here), each with its task.deleted events, and says how many in all
// (12: two full batches and a short one); the other tasks stay, the counts follow.
func TestDeleteDoneInBatches(t *testing.T) { pgtest.Engines(t, testDeleteDoneInBatches) }

func testDeleteDoneInBatches(t *testing.T, engine string) {
	defer service.SetDeleteDoneBatch(5)()
	svc := newService(t, engine)
	ctx := context.Background()
	projects, err := svc.Projects(ctx, auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	p := auth.Owner(projects[0].ID)
	for i := range 14 {
		task, err := svc.CreateTask(ctx, p, service.CreateTaskInput{Summary: fmt.Sprint("task ", i)}, "")
		if err != nil {
			t.Fatal(err)
		}
		if i >= 2 {
			if _, err := svc.SetTaskStatus(ctx, p, task.ID, "Done", nil, nil, nil); err != nil {
				t.Fatal(err)
			}
		}
	}
	_, before, err := svc.Store().Read().EventBounds(ctx, p.ProjectID)
	if err != nil {
		t.Fatal(err)
	}
	writes := svc.Store().Stats().Writes
	n, err := svc.DeleteDoneTasks(ctx, p)
	if err != nil || n != 12 {
		t.Fatalf("deleted %d (%v), want 12", n, err)
	}
	if w := svc.Store().Stats().Writes - writes; w != 3 {
		t.Errorf("the deletion took %d writes, want 3 (5 + 5 + 2 tasks)", w)
	}
	_, after, err := svc.Store().Read().EventBounds(ctx, p.ProjectID)
	if err != nil || after-before != 12 {
		t.Errorf("%d events for 12 deleted tasks (%v)", after-before, err)
	}
	tasks, _, err := svc.ListTasks(ctx, p, service.ListTasksInput{})
	if err != nil || len(tasks) != 2 {
		t.Errorf("%d tasks left (%v), want the 2 not Done", len(tasks), err)
	}
	counts, err := svc.CountTasks(ctx, p, service.CountTasksInput{})
	if err != nil || counts.Done != 0 || counts.Total != 2 {
		t.Errorf("counts %+v (%v)", counts, err)
	}
}
