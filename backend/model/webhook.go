package model

import "time"

// Webhook sends a project's events to a URL, signed with Standard Webhooks.
type Webhook struct {
	ID          int64     `json:"id"`
	ProjectID   string    `json:"projectId"`
	URL         string    `json:"url"`
	Events      []string  `json:"events"` // empty: every event of the project
	Secret      string    `json:"-"`      // never in events or lists
	Description string    `json:"description"`
	Enabled     bool      `json:"enabled"`
	CreatedAt   time.Time `json:"createdAt"`
	UpdatedAt   time.Time `json:"updatedAt"`
	// Cursor is the last seq done with; the events after it are still to send.
	Cursor int64 `json:"cursor"`
	// Attempts is how many times the event after Cursor failed; FailingSince is when
	// the first of those failures was, NextAttemptAt when to try again.
	Attempts       int        `json:"attempts"`
	FailingSince   *time.Time `json:"failingSince"`
	NextAttemptAt  *time.Time `json:"nextAttemptAt"`
	DisabledReason string     `json:"disabledReason,omitempty"`
}

// WebhookDelivery is one attempt to deliver an event to a webhook.
type WebhookDelivery struct {
	ID        int64  `json:"id"`
	WebhookID int64  `json:"webhookId"`
	Seq       int64  `json:"seq"`
	EventType string `json:"eventType"`
	// Attempt counts the attempts of the event (1 first); 0 is a redelivery by hand.
	Attempt    int       `json:"attempt"`
	Status     *int      `json:"status"` // nil: no answer (refused, timed out)
	DurationMS int64     `json:"durationMs"`
	Response   string    `json:"response"` // the answer's first 1 KiB
	Error      string    `json:"error"`
	At         time.Time `json:"at"`
}

// OK reports a 2xx answer.
func (d WebhookDelivery) OK() bool { return d.Status != nil && *d.Status >= 200 && *d.Status < 300 }
