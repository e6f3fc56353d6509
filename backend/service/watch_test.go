package service_test

import (
	"context"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

// TestMayReceive: the one rule of who receives which event, on /api/events and
// through GraphQL subscriptions.
func TestMayReceive(t *testing.T) {
	tasks := &auth.Principal{Kind: auth.KindToken, Scopes: []string{auth.TaskRead}}
	messages := &auth.Principal{Kind: auth.KindToken, Scopes: []string{auth.MessagingRead}}
	admin := &auth.Principal{Kind: auth.KindToken, Scopes: []string{auth.Admin}}
	writer := &auth.Principal{Kind: auth.KindToken, Scopes: []string{auth.TaskWrite, auth.MessagingWrite}}
	agent := auth.Agent("prj_x", 1, "builder")
	for typ, want := range map[string][]*auth.Principal{ // who receives it, of the five
		"stream.reset":              {tasks, messages, admin, writer, agent},
		service.EventTaskCreated:    {tasks, agent},
		service.EventTaskDeleted:    {tasks, agent},
		"agent.created":             {tasks, agent},
		service.EventAgentDeleted:   {tasks, agent},
		"conversation.created":      {messages, agent},
		service.EventMessageCreated: {messages, agent},
		"reaction.added":            {messages, agent},
		"document.created":          {messages, agent},
		"participant.added":         {messages, agent},
		service.EventTokenCreated:   {admin},
		service.EventProjectCreated: {admin},
		service.EventSkillCreated:   {admin},
		"job.ran":                   {admin},
		"vector.space.created":      {admin},
		"budget.exceeded":           {admin},
	} {
		for _, p := range []*auth.Principal{tasks, messages, admin, writer, agent} {
			should := false
			for _, w := range want {
				should = should || w == p
			}
			if got := service.MayReceive(p, typ); got != should {
				t.Errorf("MayReceive(%v, %s) = %v, want %v", p.Scopes, typ, got, should)
			}
		}
	}
	if service.MayReceive(nil, service.EventTaskCreated) {
		t.Error("no principal receives task events")
	}
}

// TestWatchFollowsMayReceive: opening the stream or a subscription is refused exactly
// when MayReceive would send it nothing of what it follows.
func TestWatchFollowsMayReceive(t *testing.T) { pgtest.Engines(t, testWatchFollowsMayReceive) }

func testWatchFollowsMayReceive(t *testing.T, engine string) {
	ctx := context.Background()
	svc := newService(t, engine)
	for _, scopes := range [][]string{{auth.TaskRead}, {auth.MessagingRead}, {auth.Admin}, {auth.TaskWrite}, {auth.TaskRead, auth.MessagingRead}} {
		p := &auth.Principal{Kind: auth.KindToken, ProjectID: "prj_x", Scopes: scopes}
		stream := svc.WatchEvents(ctx, p)
		if (stream == nil) != (p.Has(auth.TaskRead) || p.Has(auth.MessagingRead)) || stream != nil && errs.CodeOf(stream) != errs.Forbidden {
			t.Errorf("WatchEvents(%v) = %v", scopes, stream)
		}
		tasks := svc.WatchTasks(ctx, p)
		if (tasks == nil) != service.MayReceive(p, service.EventTaskUpdated) || tasks != nil && errs.CodeOf(tasks) != errs.Forbidden {
			t.Errorf("WatchTasks(%v) = %v", scopes, tasks)
		}
		if _, err := svc.WatchMessages(ctx, p, "1"); !service.MayReceive(p, service.EventMessageCreated) && errs.CodeOf(err) != errs.Forbidden {
			t.Errorf("WatchMessages(%v) = %v", scopes, err)
		}
	}
	if err := svc.WatchEvents(ctx, nil); errs.CodeOf(err) != errs.Unauthenticated {
		t.Errorf("WatchEvents(nil) = %v", err)
	}
	if err := svc.WatchTasks(ctx, nil); errs.CodeOf(err) != errs.Unauthenticated {
		t.Errorf("WatchTasks(nil) = %v", err)
	}
}
