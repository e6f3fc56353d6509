package api_test

import (
	"encoding/json"
	"fmt"
	"reflect"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestTaskListShowsEveryChange: the REST list sends tasks it encoded before when their
// version is unchanged (api/taskcache.go); every kind of change of what a listed task
// shows is in the next list: a step's status, an edit, the assigned agent deleted, a
// task deleted, a task of another project never.
func TestTaskListShowsEveryChange(t *testing.T) { pgtest.Engines(t, testTaskListShowsEveryChange) }

func testTaskListShowsEveryChange(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	ctx, p := t.Context(), ownerOf(env.Project.ID)
	worker := env.Agent(t, env.Project.ID, "worker")
	token := env.Token(t, env.Project.ID, auth.TaskRead)
	var ids []int64
	for _, summary := range []string{"a", "b", "c"} {
		task, err := env.Service.CreateTask(ctx, p, service.CreateTaskInput{Summary: summary, AgentID: &worker.ID,
			Steps: []service.StepInput{{Title: "one"}, {Title: "two"}}}, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, task.ID)
	}
	other := env.NewProject(t, "other")
	if _, err := env.Service.CreateTask(ctx, ownerOf(other.ID), service.CreateTaskInput{Summary: "theirs"}, ""); err != nil {
		t.Fatal(err)
	}
	// A page the cache keeps (50) and a bulk page it does not (500) show the same.
	listPage := func(limit int) map[int64]model.Task {
		t.Helper()
		r := env.Do(t, testenv.Request{Method: "GET", Path: fmt.Sprintf("/api/tasks?limit=%d", limit), Token: token})
		if r.Status != 200 {
			t.Fatalf("list: %d %s", r.Status, r.Body)
		}
		var tasks []model.Task
		if err := json.Unmarshal(r.Body, &tasks); err != nil {
			t.Fatal(err)
		}
		out := map[int64]model.Task{}
		for _, task := range tasks {
			if task.ProjectID != env.Project.ID {
				t.Fatalf("the list holds task %d of project %s", task.ID, task.ProjectID)
			}
			out[task.ID] = task
		}
		return out
	}
	list := func() map[int64]model.Task {
		t.Helper()
		got, bulk := listPage(50), listPage(500)
		if !reflect.DeepEqual(got, bulk) {
			t.Fatalf("a page of 50 shows %+v, a page of 500 %+v", got, bulk)
		}
		return got
	}
	if got := list(); len(got) != 3 || got[ids[0]].Steps[0].Status != "pending" || got[ids[0]].AgentName != "worker" {
		t.Fatalf("first list: %+v", got)
	}
	list() // now from the cache

	if _, err := env.Service.SetStepStatus(ctx, p, ids[0], 0, "completed", nil); err != nil {
		t.Fatal(err)
	}
	summary := "b, edited"
	if _, err := env.Service.EditTask(ctx, p, ids[1], service.EditTaskInput{Summary: &summary}, nil); err != nil {
		t.Fatal(err)
	}
	got := list()
	if got[ids[0]].Steps[0].Status != "completed" || got[ids[1]].Summary != summary || got[ids[2]].Summary != "c" {
		t.Fatalf("after a step and an edit: %+v", got)
	}

	if err := env.Service.DeleteAgent(ctx, p, worker.ID); err != nil {
		t.Fatal(err)
	}
	if err := env.Service.DeleteTask(ctx, p, ids[2], nil); err != nil {
		t.Fatal(err)
	}
	got = list()
	if len(got) != 2 || got[ids[0]].AgentID != nil || got[ids[0]].AgentName != "" || got[ids[1]].AgentID != nil {
		t.Fatalf("after the agent and a task were deleted: %+v", got)
	}
}
