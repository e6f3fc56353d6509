package api_test

import (
	"context"
	"net/http"
	"strconv"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// platformChanges makes one change of every kind of the platform domains, so that the
// event stream test sees every skill.*, job.* and budget.* event type.
func platformChanges(t *testing.T, env *testenv.Env, owner *auth.Principal, agent *model.Agent) {
	t.Helper()
	ctx := context.Background()
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	str := func(s string) *string { return &s }
	sk, err := env.Service.CreateSkill(ctx, owner, "oa-skill", "")
	must(err)
	_, err = env.Service.UpdateSkill(ctx, owner, sk.ID, str("oa-skill-2"), nil)
	must(err)
	_, _, err = env.Service.SetAgentSkill(ctx, owner, agent.ID, sk.ID, true)
	must(err)
	_, _, err = env.Service.SetAgentSkill(ctx, owner, agent.ID, sk.ID, false)
	must(err)
	job, err := env.Service.CreateJob(ctx, owner, service.JobInput{Name: str("oa-job"), Cron: str("@daily"), Summary: str("daily")})
	must(err)
	_, err = env.Service.UpdateJob(ctx, owner, job.ID, service.JobInput{Details: str("more")})
	must(err)
	_, err = env.Service.RunJobNow(ctx, owner, job.ID)
	must(err)
	must(env.Service.DeleteJob(ctx, owner, job.ID))
	must(env.Service.DeleteSkill(ctx, owner, sk.ID))
	budget := 0.5
	_, err = env.Service.SetBudget(ctx, owner, &budget)
	must(err)
	task, err := env.Service.CreateTask(ctx, owner, service.CreateTaskInput{Summary: "metered", AgentID: &agent.ID}, "")
	must(err)
	resp := env.Do(t, testenv.Request{Method: "POST", Path: "/api/agent_callback/" + strconv.FormatInt(task.ID, 10), Header: env.AgentHeaders(t, owner.ProjectID, agent.Name),
		Body: map[string]any{"project_id": owner.ProjectID, "usage": map[string]any{"model": "m", "cost_usd": 1}}})
	if resp.Status != http.StatusOK {
		t.Fatalf("callback with usage: %d %s", resp.Status, resp.Body)
	}
}

// TestOpenAPIUsageBounds: the callback's usage bounds in openapi.json are the code's.
func TestOpenAPIUsageBounds(t *testing.T) {
	doc := oaLoad(t)
	usage := oaProp(t, oaSchema(t, doc, "CallbackRequest"), "usage").Properties
	for name, want := range map[string]float64{"input_tokens": service.MaxUsageTokens, "output_tokens": service.MaxUsageTokens, "cost_usd": service.MaxUsageCostUSD} {
		if m := usage[name].Value.Max; m == nil || *m != want {
			t.Errorf("usage.%s maximum is %v, want %v", name, m, want)
		}
	}
	if m := usage["model"].Value.MaxLength; m == nil || int(*m) != service.MaxModelNameLen {
		t.Errorf("usage.model maxLength is %v, want %d", m, service.MaxModelNameLen)
	}
	if m := oaProp(t, oaSchema(t, doc, "CreateTaskRequest"), "required_skills").MaxItems; m == nil || int(*m) != service.MaxRequiredSkills {
		t.Errorf("required_skills maxItems is %v, want %d", m, service.MaxRequiredSkills)
	}
}
