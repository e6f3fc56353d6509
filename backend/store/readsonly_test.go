package store_test

import (
	"context"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
)

// TestReadsOnlyRead: what a write changed is in the search index and the activity trail
// once the write is answered, and a search (a list, the counts) or a read of the trail
// runs no write of its own to catch them up.
func TestReadsOnlyRead(t *testing.T) {
	srv := serve(t, t.TempDir())
	ctx, owner := context.Background(), auth.Owner(srv.project)
	created, err := srv.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "Deploy the café"}, "")
	if err != nil {
		t.Fatal(err)
	}
	st := srv.Store()
	before := st.Stats().Writes

	found, _, err := srv.Service.ListTasks(ctx, owner, service.ListTasksInput{Query: "cafe", PageInput: service.PageInput{Limit: 10}})
	if err != nil || len(found) != 1 || found[0].ID != created.ID {
		t.Errorf("a search for the task just created: %v (%v); want it", found, err)
	}
	counts, err := srv.Service.CountTasks(ctx, owner, service.CountTasksInput{Query: "deploy"})
	if err != nil || counts.Total != 1 {
		t.Errorf("the counts of a search for it: %+v (%v); want 1", counts, err)
	}
	trail, err := srv.Service.Activity(ctx, owner, service.ActivityInput{Limit: 10})
	if err != nil || len(trail) == 0 || trail[0].Action != "task.created" {
		t.Errorf("the activity trail after the create: %+v (%v); want the create first", trail, err)
	}
	if after := st.Stats().Writes; after != before {
		t.Errorf("the reads ran %d writes; want none", after-before)
	}
}
