package graphql

import (
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Webhooks (admin): create (the secret shown once), list, change, delete, their
// deliveries, redeliver and a test event.

var webhookType = gql.NewObject(gql.ObjectConfig{Name: "Webhook", Description: "Sends the project's events, signed with Standard Webhooks (webhook-id, webhook-timestamp, webhook-signature), to a URL fixed at creation, in seq order, at least once.", Fields: gql.Fields{
	"id":          &gql.Field{Type: nnInt, Resolve: field(func(w model.Webhook) any { return w.ID })},
	"url":         &gql.Field{Type: nnString, Description: "Where the events are POSTed; fixed at creation.", Resolve: field(func(w model.Webhook) any { return w.URL })},
	"events":      &gql.Field{Type: listOf(gql.String), Description: "The event types sent (task.created, or task.* for a family); empty: every event of the project.", Resolve: field(func(w model.Webhook) any { return w.Events })},
	"description": &gql.Field{Type: nnString, Resolve: field(func(w model.Webhook) any { return w.Description })},
	"enabled":     &gql.Field{Type: nnBool, Description: "False once disabled by hand, or after three days of failed attempts (disabledReason).", Resolve: field(func(w model.Webhook) any { return w.Enabled })},
	"secret": &gql.Field{Type: gql.String, Description: "The signing secret (whsec_ and base64): set only in the result of createWebhook, shown this once.", Resolve: field(func(w model.Webhook) any {
		if w.Secret == "" {
			return nil
		}
		return w.Secret
	})},
	"cursor":         &gql.Field{Type: nnInt, Description: "The seq of the last event it is done with: the events after it are still to send.", Resolve: field(func(w model.Webhook) any { return w.Cursor })},
	"attempts":       &gql.Field{Type: nnInt, Description: "How many times the next event has failed (0 when all is well).", Resolve: field(func(w model.Webhook) any { return w.Attempts })},
	"failingSince":   &gql.Field{Type: gql.String, Description: "When the attempts began to fail (RFC 3339, UTC); null when all is well.", Resolve: field(func(w model.Webhook) any { return timePtrString(w.FailingSince) })},
	"nextAttemptAt":  &gql.Field{Type: gql.String, Description: "When the failed event is tried again (RFC 3339, UTC); null when none is waiting.", Resolve: field(func(w model.Webhook) any { return timePtrString(w.NextAttemptAt) })},
	"disabledReason": &gql.Field{Type: nnString, Description: "Why the server disabled it; empty otherwise.", Resolve: field(func(w model.Webhook) any { return w.DisabledReason })},
	"createdAt":      timeField("When the webhook was created", func(w model.Webhook) time.Time { return w.CreatedAt }, false),
	"updatedAt":      timeField("When the webhook last changed", func(w model.Webhook) time.Time { return w.UpdatedAt }, false),
}})

var webhookDeliveryType = gql.NewObject(gql.ObjectConfig{Name: "WebhookDelivery", Description: "One attempt to send an event to a webhook.", Fields: gql.Fields{
	"id":         &gql.Field{Type: nnInt, Resolve: field(func(d model.WebhookDelivery) any { return d.ID })},
	"webhookId":  &gql.Field{Type: nnInt, Resolve: field(func(d model.WebhookDelivery) any { return d.WebhookID })},
	"seq":        &gql.Field{Type: nnInt, Description: "The event's seq.", Resolve: field(func(d model.WebhookDelivery) any { return d.Seq })},
	"eventType":  &gql.Field{Type: nnString, Resolve: field(func(d model.WebhookDelivery) any { return d.EventType })},
	"attempt":    &gql.Field{Type: nnInt, Description: "1 for the event's first attempt, 2 for its first retry, ...; 0 for a redelivery by hand.", Resolve: field(func(d model.WebhookDelivery) any { return d.Attempt })},
	"ok":         &gql.Field{Type: nnBool, Description: "The receiver answered 2xx.", Resolve: field(func(d model.WebhookDelivery) any { return d.OK() })},
	"status":     &gql.Field{Type: gql.Int, Description: "The HTTP status of the answer; null when there was none (see error).", Resolve: field(func(d model.WebhookDelivery) any { return intPtr(d.Status) })},
	"durationMs": &gql.Field{Type: nnInt, Description: "How long the attempt took, in milliseconds.", Resolve: field(func(d model.WebhookDelivery) any { return d.DurationMS })},
	"response":   &gql.Field{Type: nnString, Description: "The first 1 KiB of the answer's body.", Resolve: field(func(d model.WebhookDelivery) any { return d.Response })},
	"error":      &gql.Field{Type: nnString, Description: "Why there was no answer (refused, timed out); empty otherwise.", Resolve: field(func(d model.WebhookDelivery) any { return d.Error })},
	"at":         timeField("When the attempt ended", func(d model.WebhookDelivery) time.Time { return d.At }, false),
}})

func intPtr(v *int) any {
	if v == nil {
		return nil
	}
	return *v
}

func webhookInput(args map[string]any) service.WebhookInput {
	in := service.WebhookInput{URL: optString(args, "url"), Description: optString(args, "description")}
	if _, ok := args["events"]; ok {
		events := stringList(args, "events")
		in.Events = &events
	}
	if v, ok := args["enabled"].(bool); ok {
		in.Enabled = &v
	}
	return in
}

func (b builder) webhookQueries(f gql.Fields) {
	svc := b.svc
	f["webhooks"] = &gql.Field{Type: listOf(webhookType), Description: "The project's webhooks, without their secrets (admin).",
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Webhooks(p.Context, pr)
		})}
	f["webhookDeliveries"] = &gql.Field{Type: listOf(webhookDeliveryType), Description: "A webhook's attempts, newest first (admin); page with first and before. Kept 7 days.",
		Args: gql.FieldConfigArgument{
			"webhookId": {Type: nnInt},
			"first":     {Type: gql.Int, Description: "At most this many, 1 to 1000 (default 100)."},
			"before":    {Type: gql.Int, Description: "Only attempts older than this delivery id (the last id of the previous page)."},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			first, before := firstBefore(p.Args)
			return svc.WebhookDeliveries(p.Context, pr, argInt64(p.Args, "webhookId"), before, first)
		})}
}

func (b builder) webhookMutations(f gql.Fields) {
	svc := b.svc
	f["createWebhook"] = &gql.Field{Type: gql.NewNonNull(webhookType), Description: "Registers a webhook (admin): the project's events from now on are POSTed to url (http or https, on the public internet unless the server runs with --webhooks-allow-private; redirects are not followed). Its signing secret is in secret, shown this once.",
		Args: gql.FieldConfigArgument{
			"url":         {Type: nnString},
			"events":      {Type: gql.NewList(nnString), Description: "Event types to send (task.created, or task.* for a family); empty or left out: all."},
			"description": {Type: gql.String},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.CreateWebhook(p.Context, pr, webhookInput(p.Args))
		})}
	f["updateWebhook"] = &gql.Field{Type: gql.NewNonNull(webhookType), Description: "Changes a webhook's events, description or enabled flag (admin); arguments left out stay as they are. Enabling it again resumes from its cursor at once.",
		Args: gql.FieldConfigArgument{
			"id":          {Type: nnInt},
			"events":      {Type: gql.NewList(nnString)},
			"description": {Type: gql.String},
			"enabled":     {Type: gql.Boolean},
		},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.UpdateWebhook(p.Context, pr, argInt64(p.Args, "id"), webhookInput(p.Args))
		})}
	f["deleteWebhook"] = &gql.Field{Type: nnBool, Description: "Deletes a webhook and its deliveries (admin). True when done.",
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			if err := svc.DeleteWebhook(p.Context, pr, argInt64(p.Args, "id")); err != nil {
				return nil, err
			}
			return true, nil
		})}
	f["redeliver"] = &gql.Field{Type: gql.NewNonNull(webhookDeliveryType), Description: "Sends a delivery's event to its webhook again, now, and returns the new attempt (admin). The event must still be in the log (7 days).",
		Args: gql.FieldConfigArgument{"deliveryId": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.Redeliver(p.Context, pr, argInt64(p.Args, "deliveryId"))
		})}
	f["testWebhook"] = &gql.Field{Type: nnInt, Description: "Writes a webhook.test event that only this (enabled) webhook is sent (admin); returns its seq.",
		Args: gql.FieldConfigArgument{"id": {Type: nnInt}},
		Resolve: resolve(func(p gql.ResolveParams, pr *auth.Principal) (any, error) {
			return svc.TestWebhook(p.Context, pr, argInt64(p.Args, "id"))
		})}
}
