package cluster_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/mail"
	"github.com/agentdesk/agentdesk/backend/mail/mailtest"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestMailOncePerQuestion: two servers sharing the database, both sending mail, email
// each question once: they find it both, queue it once, and one of them sends it, even
// while a slow mail server keeps each send in flight past the other's next look.
func TestMailOncePerQuestion(t *testing.T) {
	smtpd := mailtest.Start(t)
	smtpd.Slow(1500 * time.Millisecond) // longer than the servers' one-second look
	cfg, err := mail.ParseConfig(smtpd.URL(), "desk@example.com")
	if err != nil {
		t.Fatal(err)
	}
	loc := testenv.ParseDB(t, pgtest.Migrated(t, testenv.MigratePostgres))
	a := testenv.StartWith(t, server.Config{DB: loc, SMTP: cfg})
	b := testenv.StartWith(t, server.Config{DB: loc, SMTP: cfg})
	ctx := context.Background()
	owner := auth.Owner(a.Project.ID)
	if _, err := a.Service.AddMember(ctx, owner, service.AddMemberInput{Name: "Alice", Email: "alice@example.com", Role: model.RoleMember}); err != nil {
		t.Fatal(err)
	}
	const questions = 6
	for i := range questions {
		svc := a.Service
		if i%2 == 1 {
			svc = b.Service // asked on either server
		}
		task, err := svc.CreateTask(ctx, owner, service.CreateTaskInput{Summary: fmt.Sprintf("task %d", i)}, "")
		if err != nil {
			t.Fatal(err)
		}
		q := fmt.Sprintf("question %d?", i)
		if _, err := svc.SetTaskStatus(ctx, owner, task.ID, model.StatusWaiting, &q, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]bool{}
	for range questions {
		m := smtpd.Next(t, waitFor)
		if seen[m.Subject] {
			t.Fatalf("emailed twice: %q", m.Subject)
		}
		seen[m.Subject] = true
	}
	// Both servers look every second: two seconds more show any second send.
	smtpd.None(t, 2*time.Second)
}
