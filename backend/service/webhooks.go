package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Webhooks (Standard Webhooks): an administrator registers a URL; the project's events
// are POSTed to it, signed, in seq order, driven from the event log by the webhook's
// cursor (webhook_delivery.go sends them; backend/jobs says when).

// Event types of webhooks.
const (
	EventWebhookCreated  = "webhook.created"
	EventWebhookUpdated  = "webhook.updated"
	EventWebhookDeleted  = "webhook.deleted"
	EventWebhookDisabled = "webhook.disabled"
	// EventWebhookTest is sent by testWebhook to one webhook only (data.webhookId).
	EventWebhookTest = "webhook.test"
)

// Bounds of a webhook's fields.
const (
	MaxWebhookURLLen         = 2048
	MaxWebhookDescriptionLen = 500
	MaxWebhookEvents         = 100
	// WebhookSecretPrefix starts every signing secret (Standard Webhooks).
	WebhookSecretPrefix = "whsec_"
)

// eventPattern is an event type (task.created) or a family of them (task.*).
var eventPattern = regexp.MustCompile(`^[a-z][a-z_]*(\.[a-z][a-z_]*)*(\.\*)?$`)

// WebhookInput is a new webhook, or the changes to one (nil fields stay as they are;
// the URL is fixed at creation).
type WebhookInput struct {
	URL         *string
	Events      *[]string
	Description *string
	Enabled     *bool
}

// webhooksState is the deliverer's side of the service: a wake-up for changes that
// write no event (a redelivery), and how many webhooks are enabled, so that commits
// wake it only when some webhook may have work (no query per commit otherwise).
type webhooksState struct {
	once    sync.Once
	wake    chan struct{}
	enabled atomic.Int64 // -1 until counted
}

func (w *webhooksState) ch() chan struct{} {
	w.once.Do(func() {
		w.wake = make(chan struct{}, 1)
		w.enabled.Store(-1)
	})
	return w.wake
}

// WebhooksChanged receives a value when a webhook's next attempt was moved without an
// event being written (a redelivery), so that the deliverer looks again.
func (s *Service) WebhooksChanged() <-chan struct{} { return s.hooks.ch() }

func (s *Service) webhooksChanged() {
	select {
	case s.hooks.ch() <- struct{}{}:
	default:
	}
}

// WebhooksEnabled reports whether any webhook of any project is enabled, from a count
// kept in memory: CountWebhooks sets it, and every change of a webhook in this process
// counts again. (Only the server changes webhooks; the deliverer counts again every
// second anyway.)
func (s *Service) WebhooksEnabled(ctx context.Context) bool {
	s.hooks.ch()
	if n := s.hooks.enabled.Load(); n >= 0 {
		return n > 0
	}
	return s.CountWebhooks(ctx) > 0
}

// CountWebhooks counts the enabled webhooks again, and returns the count (-1 when the
// database could not say: then the deliverer looks anyway).
func (s *Service) CountWebhooks(ctx context.Context) int64 {
	s.hooks.ch()
	n, err := s.store.Read().EnabledWebhooks(ctx)
	if err != nil {
		s.hooks.enabled.Store(-1)
		return 1
	}
	s.hooks.enabled.Store(n)
	return n
}

// checkWebhookURL accepts an absolute http or https URL without credentials, whose host
// webhooks may reach (checkWebhookHost).
func (s *Service) checkWebhookURL(ctx context.Context, raw string) error {
	if err := checkText("url", raw, true, MaxWebhookURLLen); err != nil {
		return err
	}
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Hostname() == "" {
		return errs.Invalid("url %q is not an absolute http or https URL, e.g. https://example.com/hooks/agentdesk", raw)
	}
	if u.User != nil {
		return errs.Invalid("url must not carry a user name or password: the payload is signed with the webhook's secret instead")
	}
	if u.Fragment != "" {
		return errs.Invalid("url must not have a #fragment")
	}
	return s.checkWebhookHost(ctx, u.Hostname())
}

func checkWebhookEvents(events []string) error {
	if len(events) > MaxWebhookEvents {
		return errs.Invalid("events: at most %d event types", MaxWebhookEvents)
	}
	for _, e := range events {
		if len(e) > 100 || !eventPattern.MatchString(e) {
			return errs.Invalid("events: %q is not an event type (e.g. task.created) or a family of them (e.g. task.*)", e)
		}
	}
	return nil
}

// newWebhookSecret is whsec_ and the base64 of 24 random bytes.
func newWebhookSecret() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString(b)
}

// CreateWebhook registers a webhook of the project (admin). The result carries the
// signing secret, which no other answer shows. Events from the next one on are sent.
func (s *Service) CreateWebhook(ctx context.Context, p *auth.Principal, in WebhookInput) (*model.Webhook, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if in.URL == nil {
		return nil, errs.Invalid("url is required")
	}
	now := s.clock()
	w := &model.Webhook{ProjectID: p.ProjectID, URL: strings.TrimSpace(*in.URL), Events: []string{}, Secret: newWebhookSecret(),
		Enabled: true, CreatedAt: now, UpdatedAt: now}
	if err := s.applyWebhookInput(w, in); err != nil {
		return nil, err
	}
	if err := s.checkWebhookURL(ctx, w.URL); err != nil {
		return nil, err
	}
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		last, err := tx.LastEventSeq(ctx, p.ProjectID)
		if err != nil {
			return internal("read the event seq", err)
		}
		w.Cursor = last + 1 // its own webhook.created, written next, is not sent to it
		if err := tx.InsertWebhook(ctx, w); err != nil {
			return internal("create webhook", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventWebhookCreated, w, now)
	})
	if err != nil {
		return nil, err
	}
	s.CountWebhooks(ctx)
	return w, nil
}

func (s *Service) applyWebhookInput(w *model.Webhook, in WebhookInput) error {
	if in.Events != nil {
		if err := checkWebhookEvents(*in.Events); err != nil {
			return err
		}
		w.Events = append([]string{}, (*in.Events)...)
	}
	if in.Description != nil {
		if err := checkText("description", *in.Description, false, MaxWebhookDescriptionLen); err != nil {
			return err
		}
		w.Description = *in.Description
	}
	if in.Enabled != nil {
		w.Enabled = *in.Enabled
	}
	return nil
}

// UpdateWebhook changes a webhook's events, description or enabled flag (admin); its
// URL is fixed at creation. Enabling it again clears its failures: it resumes from its
// cursor at once.
func (s *Service) UpdateWebhook(ctx context.Context, p *auth.Principal, id int64, in WebhookInput) (*model.Webhook, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if in.URL != nil {
		return nil, errs.Invalid("a webhook's url cannot change: create another webhook and delete this one")
	}
	now := s.clock()
	var w *model.Webhook
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		var err error
		if w, err = s.loadWebhook(ctx, tx.Reader, p.ProjectID, id); err != nil {
			return err
		}
		wasEnabled := w.Enabled
		if err := s.applyWebhookInput(w, in); err != nil {
			return err
		}
		if w.Enabled && !wasEnabled {
			w.Attempts, w.FailingSince, w.NextAttemptAt, w.DisabledReason = 0, nil, nil, ""
		}
		w.UpdatedAt = now
		if err := tx.UpdateWebhook(ctx, w); err != nil {
			return internal("update webhook", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventWebhookUpdated, w, now)
	})
	if err != nil {
		return nil, err
	}
	s.CountWebhooks(ctx)
	return w, nil
}

// DeleteWebhook removes a webhook and its deliveries (admin).
func (s *Service) DeleteWebhook(ctx context.Context, p *auth.Principal, id int64) error {
	if err := require(p, auth.Admin); err != nil {
		return err
	}
	now := s.clock()
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		w, err := s.loadWebhook(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return err
		}
		if err := tx.DeleteWebhook(ctx, p.ProjectID, id); err != nil {
			return internal("delete webhook", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventWebhookDeleted, map[string]any{"id": id, "url": w.URL}, now)
	})
	if err == nil {
		s.CountWebhooks(ctx)
	}
	return err
}

// Webhooks lists the project's webhooks, without their secrets (admin).
func (s *Service) Webhooks(ctx context.Context, p *auth.Principal) ([]model.Webhook, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	out, err := s.store.Read().Webhooks(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("list webhooks", err)
	}
	for i := range out {
		out[i].Secret = ""
	}
	return out, nil
}

// WebhookDeliveries lists a webhook's attempts, newest first; before pages (admin).
func (s *Service) WebhookDeliveries(ctx context.Context, p *auth.Principal, webhookID, before int64, limit int) ([]model.WebhookDelivery, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if limit < 1 || limit > MaxListLimit {
		return nil, errs.Invalid("first must be between 1 and %d", MaxListLimit)
	}
	r := s.store.Read()
	if _, err := s.loadWebhook(ctx, r, p.ProjectID, webhookID); err != nil {
		return nil, err
	}
	out, err := r.WebhookDeliveries(ctx, webhookID, before, limit)
	if err != nil {
		return nil, internal("list webhook deliveries", err)
	}
	return out, nil
}

// TestWebhook writes a webhook.test event that only this webhook is sent (admin), and
// returns its seq. The webhook must be enabled.
func (s *Service) TestWebhook(ctx context.Context, p *auth.Principal, id int64) (int64, error) {
	if err := require(p, auth.Admin); err != nil {
		return 0, err
	}
	now := s.clock()
	var seq int64
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		w, err := s.loadWebhook(ctx, tx.Reader, p.ProjectID, id)
		if err != nil {
			return err
		}
		if !w.Enabled {
			return errs.Conflicting("webhook %d is disabled: enable it first (updateWebhook with enabled: true)", id)
		}
		if err := tx.AppendEvent(ctx, p.ProjectID, EventWebhookTest, map[string]any{"webhookId": id, "url": w.URL}, now); err != nil {
			return err
		}
		seq, err = tx.LastEventSeq(ctx, p.ProjectID)
		return err
	})
	return seq, err
}

func (s *Service) loadWebhook(ctx context.Context, r store.Reader, projectID string, id int64) (*model.Webhook, error) {
	w, err := r.Webhook(ctx, projectID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("webhook %d not found", id)
	}
	if err != nil {
		return nil, internal("load webhook", err)
	}
	return w, nil
}

// WebhookDeliveryRetention is how long the delivery log keeps an attempt (as long as
// the event log keeps events by default).
const WebhookDeliveryRetention = 7 * 24 * time.Hour

// PruneWebhookDeliveries forgets the attempts older than WebhookDeliveryRetention.
func (s *Service) PruneWebhookDeliveries(ctx context.Context) error {
	before := s.clock().Add(-WebhookDeliveryRetention)
	return s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		_, err := tx.PruneWebhookDeliveries(ctx, before)
		return err
	})
}
