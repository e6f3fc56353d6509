package graphql

import (
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/store"
)

// The emails to the people questions ask (admin): what was sent, and what failed.

var mailSendType = gql.NewObject(gql.ObjectConfig{Name: "MailSend", Description: "An email to one person about one question (a task at a waiting_version), sent when the server has --smtp-url.", Fields: gql.Fields{
	"id":             &gql.Field{Type: nnInt, Resolve: field(func(m store.MailSend) any { return m.ID })},
	"taskId":         &gql.Field{Type: nnInt, Resolve: field(func(m store.MailSend) any { return m.TaskID })},
	"waitingVersion": &gql.Field{Type: nnInt, Description: "The question's waiting_version.", Resolve: field(func(m store.MailSend) any { return m.WaitingVersion })},
	"recipient":      &gql.Field{Type: nnString, Description: "The person asked, by email.", Resolve: field(func(m store.MailSend) any { return m.Recipient })},
	"status":         &gql.Field{Type: nnString, Description: "queued (to send, or to retry at nextAttemptAt), sent, failed (given up after 3 days), or dropped (the question ended before it went out).", Resolve: field(func(m store.MailSend) any { return m.Status })},
	"attempts":       &gql.Field{Type: nnInt, Resolve: field(func(m store.MailSend) any { return m.Attempts })},
	"lastError":      &gql.Field{Type: nnString, Description: "Why the last attempt failed, or why it was dropped; empty otherwise.", Resolve: field(func(m store.MailSend) any { return m.LastError })},
	"nextAttemptAt": &gql.Field{Type: gql.String, Description: "When it is tried (again), RFC 3339 UTC; null unless queued.", Resolve: field(func(m store.MailSend) any {
		if m.Status != store.MailQueued {
			return nil
		}
		return m.NextAttemptAt.UTC().Format(time.RFC3339)
	})},
	"sentAt":    &gql.Field{Type: gql.String, Description: "When the mail server took it (RFC 3339, UTC); null until then.", Resolve: field(func(m store.MailSend) any { return timePtrString(m.SentAt) })},
	"createdAt": timeField("When the question was found and the email queued", func(m store.MailSend) time.Time { return m.CreatedAt }, false),
}})

func (b builder) mailQueries(f gql.Fields) {
	svc := b.svc
	f["mailSends"] = &gql.Field{Type: listOf(mailSendType), Description: "The project's recent question emails, newest first, with their status and last error (admin). Kept 7 days once done with.",
		Args: gql.FieldConfigArgument{"first": {Type: gql.Int, Description: "At most this many, 1 to 1000 (default 100)."}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			first := 100
			if v, ok := p.Args["first"].(int); ok {
				first = v
			}
			return svc.MailSends(p.Context, pr, first)
		})}
}
