package api_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestTeamSessionsAreSeparateCredentials: each of a person's sessions is a credential of
// its own for the open streams. Ending the phone's session closes the phone's stream,
// and the laptop's, open all along, goes on receiving events (the hub used to check one
// session of a person for all of them).
func TestTeamSessionsAreSeparateCredentials(t *testing.T) {
	pgtest.Engines(t, testTeamSessionsAreSeparateCredentials)
}

func testTeamSessionsAreSeparateCredentials(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleMember)
	laptop := tm.signIn(t, tm.browser(t), "dana")
	phone := tm.signIn(t, tm.browser(t), "dana")
	phoneSessions := tm.sessions(t, phone)
	if len(phoneSessions) != 2 {
		t.Fatalf("Dana's sessions: %+v", phoneSessions)
	}
	phoneID := phoneSessions[0].ID
	if !phoneSessions[0].Current {
		phoneID = phoneSessions[1].ID
	}
	laptopStream, phoneStream := dialWithCookie(t, tm, laptop), dialWithCookie(t, tm, phone)

	r := tm.env.Do(t, withCookie(testenv.Request{Method: "DELETE", Path: fmt.Sprintf("/api/me/sessions/%d", phoneID)}, laptop, tm.csrf(t, laptop)))
	if r.Status != http.StatusNoContent {
		t.Fatalf("end the phone's session: %d %s", r.Status, r.Body)
	}
	expectClose(t, phoneStream, "signed out")

	// The check that closed the phone's stream did not close the laptop's, which still
	// carries what happens next.
	owner := tm.env.Token(t, tm.env.Project.ID, auth.TaskWrite)
	if r := tm.env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: owner, Body: `{"summary":"after the phone left"}`}); r.Status != http.StatusCreated {
		t.Fatalf("create a task: %d %s", r.Status, r.Body)
	}
	nextIs(t, laptopStream, "task.created", "after the phone left")
}
