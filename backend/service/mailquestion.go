package service

import (
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// The seam between the question's fields and the email (issue 40). Tasks do not carry
// waiting_options and waiting_expires_at yet, nor does Respond take a choice; once
// they do, the lead switches these three over (see each) and nothing else in mail.go
// changes.

// mailOptions are the options a question offers, one link each in its email.
// Switch-over: return t.WaitingOptions.
var mailOptions = func(t *model.Task) []string { return nil }

// mailExpiry is when the question stops taking answers, nil for never.
// Switch-over: return t.WaitingExpiresAt.
var mailExpiry = func(t *model.Task) *time.Time { return nil }

// mailChoice is the answer a click on an option's link gives.
// Switch-over: RespondInput{Choice: &option, WaitingVersion: &version}.
func mailChoice(option string, version int64) RespondInput {
	return RespondInput{Response: option, WaitingVersion: &version}
}
