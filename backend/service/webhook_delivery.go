package service

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/version"
)

// Delivery of webhooks: at least once, in seq order per webhook, one request in flight
// per webhook. A webhook's cursor is the last seq it is done with; the deliverer
// (backend/jobs) calls DeliverWebhook for each webhook that DueWebhooks lists.

// Timing and bounds of deliveries.
const (
	// WebhookTimeout bounds one attempt, from connecting to reading the answer.
	WebhookTimeout = 10 * time.Second
	// WebhookFailingFor is how long a webhook may fail before it is disabled.
	WebhookFailingFor = 3 * 24 * time.Hour
	// WebhookResponseExcerpt is how much of an answer the delivery log keeps.
	WebhookResponseExcerpt = 1024
	// webhookReadLimit is how much of an answer is read at all (so that the
	// connection can be reused); the rest is never read.
	webhookReadLimit = 64 << 10
	// webhookEventsPage is how many events the deliverer reads at a time.
	webhookEventsPage = 100
)

// WebhookBackoff is the wait after each failed attempt of an event; after the last,
// a day, until WebhookFailingFor since the first failure (then a last attempt at that
// time; if it fails, the webhook is disabled).
var WebhookBackoff = []time.Duration{5 * time.Second, 5 * time.Minute, 30 * time.Minute, 2 * time.Hour, 5 * time.Hour, 10 * time.Hour}

func webhookBackoff(failures int) time.Duration {
	if failures >= 1 && failures <= len(WebhookBackoff) {
		return WebhookBackoff[failures-1]
	}
	return 24 * time.Hour
}

// WebhookMessageID is the webhook-id of an event: the same for every attempt, derived
// from the project and the seq (no '.' in it, as the scheme asks).
func WebhookMessageID(projectID string, seq int64) string {
	return "msg_" + strings.ReplaceAll(projectID, ".", "_") + "_" + strconv.FormatInt(seq, 10)
}

// SignWebhook is the webhook-signature header's value: "v1," and the base64 of the
// HMAC-SHA256, keyed with the secret's decoded bytes, of "id.timestamp.body".
func SignWebhook(secret, id string, timestamp int64, body []byte) (string, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, WebhookSecretPrefix))
	if err != nil {
		return "", fmt.Errorf("the webhook secret is not base64: %w", err)
	}
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id))
	mac.Write([]byte{'.'})
	mac.Write([]byte(strconv.FormatInt(timestamp, 10)))
	mac.Write([]byte{'.'})
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil)), nil
}

// wantsEvent reports whether the webhook is sent the event: webhook.test only to the
// webhook it names; the rest by the webhook's events (none: all; "task.*": a family).
func wantsEvent(w *model.Webhook, e model.Event) bool {
	if e.Type == EventWebhookTest {
		var data struct {
			WebhookID int64 `json:"webhookId"`
		}
		raw, _ := e.Data.(json.RawMessage)
		_ = json.Unmarshal(raw, &data)
		return data.WebhookID == w.ID
	}
	if len(w.Events) == 0 {
		return true
	}
	for _, pattern := range w.Events {
		if family, ok := strings.CutSuffix(pattern, ".*"); ok {
			if strings.HasPrefix(e.Type, family+".") {
				return true
			}
		} else if pattern == e.Type {
			return true
		}
	}
	return false
}

// DueWebhook is an enabled webhook with events to send now, and its project (the
// deliverer shares the deliveries fairly between projects).
type DueWebhook struct {
	ID        int64
	ProjectID string
}

// DueWebhooks lists the enabled webhooks with events to send now, by id.
func (s *Service) DueWebhooks(ctx context.Context) ([]DueWebhook, error) {
	list, err := s.store.Read().DueWebhooks(ctx, s.clock())
	if err != nil {
		return nil, internal("list due webhooks", err)
	}
	due := make([]DueWebhook, len(list))
	for i, w := range list {
		due[i] = DueWebhook{ID: w.ID, ProjectID: w.ProjectID}
	}
	return due, nil
}

// NextWebhookAttempt is the earliest retry set after now; ok is false when none is.
func (s *Service) NextWebhookAttempt(ctx context.Context) (time.Time, bool, error) {
	return s.store.Read().NextWebhookAttempt(ctx, s.clock())
}

// DeliverWebhook makes one attempt at the next event the webhook is to be sent, and
// records it: a 2xx moves the cursor past it; anything else sets the next attempt by
// WebhookBackoff, or disables the webhook once it has failed for WebhookFailingFor
// (with a webhook.disabled event). more is true when the attempt succeeded (the next
// event may follow at once). When ctx ends during the attempt, it is not recorded.
//
// Servers sharing a PostgreSQL database send a webhook's events one server at a time
// (store.HoldWebhook): while another server is sending them, more is false and nothing
// is sent from here.
func (s *Service) DeliverWebhook(ctx context.Context, id int64) (more bool, err error) {
	_, err = s.store.HoldWebhook(ctx, id, func() (err error) {
		more, err = s.deliverWebhook(ctx, id)
		return err
	})
	if err != nil {
		return false, internal("hold webhook", err) // internal keeps the service's own errors
	}
	return more, nil
}

// deliverWebhook is DeliverWebhook while this server holds the webhook.
func (s *Service) deliverWebhook(ctx context.Context, id int64) (more bool, err error) {
	r := s.store.Read()
	w, err := r.WebhookByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, internal("load webhook", err)
	}
	if !w.Enabled || (w.NextAttemptAt != nil && w.NextAttemptAt.After(s.clock())) {
		return false, nil
	}
	e, skipTo, err := s.nextWebhookEvent(ctx, r, w)
	if err != nil {
		return false, err
	}
	if e == nil {
		if skipTo > w.Cursor {
			err := s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error { return ignoreMissing(tx.AdvanceWebhook(ctx, w.ID, skipTo)) })
			if err != nil {
				return false, internal("advance webhook", err)
			}
		}
		return false, nil
	}
	d, err := s.sendWebhook(ctx, w, *e)
	if ctx.Err() != nil {
		return false, ctx.Err() // stopping: the attempt does not count
	}
	if err != nil {
		return false, err
	}
	now := s.clock()
	var disabled *model.Webhook // by this attempt, logged once it is stored
	err = s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		cur, err := tx.WebhookByID(ctx, w.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil // deleted meanwhile
		}
		if err != nil {
			return err
		}
		if cur.Cursor >= e.Seq {
			return nil // done with meanwhile (cannot happen with one deliverer; harmless)
		}
		if skipTo > cur.Cursor {
			if err := tx.AdvanceWebhook(ctx, w.ID, skipTo); err != nil {
				return err
			}
			cur.Attempts, cur.FailingSince = 0, nil
		}
		d.Attempt = cur.Attempts + 1
		if err := tx.InsertWebhookDelivery(ctx, d); err != nil {
			return err
		}
		if d.OK() {
			return tx.AdvanceWebhook(ctx, w.ID, e.Seq)
		}
		wasEnabled := cur.Enabled
		if err := s.webhookFailed(ctx, tx, cur, d, now); err != nil {
			return err
		}
		if wasEnabled && !cur.Enabled {
			disabled = cur
		}
		return nil
	})
	if err != nil {
		return false, internal("record webhook delivery", err)
	}
	if disabled != nil {
		slog.Warn("webhook disabled", "webhook", disabled.ID, "url", disabled.URL, "reason", disabled.DisabledReason)
	}
	if s.onDelivery != nil {
		s.onDelivery(*d)
	}
	if !d.OK() {
		s.CountWebhooks(ctx) // it may have been disabled
	}
	return d.OK(), nil
}

func ignoreMissing(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	return err
}

// webhookFailed sets the webhook's next attempt after a failed one, or disables it.
func (s *Service) webhookFailed(ctx context.Context, tx *store.Tx, w *model.Webhook, d *model.WebhookDelivery, now time.Time) error {
	w.Attempts++
	if w.FailingSince == nil {
		w.FailingSince = &now
	}
	deadline := w.FailingSince.Add(WebhookFailingFor)
	if !now.Before(deadline) {
		w.Enabled, w.NextAttemptAt = false, nil
		w.DisabledReason = fmt.Sprintf("every attempt failed for %s since %s; the last: %s", "3 days",
			w.FailingSince.UTC().Format(time.RFC3339), deliveryOutcome(d))
		w.UpdatedAt = now
		if err := tx.UpdateWebhook(ctx, w); err != nil {
			return err
		}
		return tx.AppendEvent(ctx, w.ProjectID, EventWebhookDisabled, w, now)
	}
	next := now.Add(webhookBackoff(w.Attempts))
	if next.After(deadline) {
		next = deadline // the last attempt, three days after the first failure
	}
	w.NextAttemptAt = &next
	return tx.UpdateWebhook(ctx, w)
}

func deliveryOutcome(d *model.WebhookDelivery) string {
	if d.Status != nil {
		return "HTTP " + strconv.Itoa(*d.Status)
	}
	return d.Error
}

// nextWebhookEvent finds the first event after the webhook's cursor that it is to be
// sent; skipTo is the seq up to which the events were not for it, or are no longer kept
// (pruned), so that the cursor can move past them.
func (s *Service) nextWebhookEvent(ctx context.Context, r store.Reader, w *model.Webhook) (e *model.Event, skipTo int64, err error) {
	skipTo = w.Cursor
	// Pruned events: those before the first one kept (all, when none is). Bounds and
	// events are read apart, so only what is certain is skipped: never an event that
	// was written in between.
	first, last, err := r.EventBounds(ctx, w.ProjectID)
	if err != nil {
		return nil, 0, internal("read events", err)
	}
	if first == 0 {
		return nil, max(skipTo, last), nil
	}
	skipTo = max(skipTo, first-1)
	for {
		evs, err := r.EventsSince(ctx, w.ProjectID, skipTo, webhookEventsPage)
		if err != nil {
			return nil, 0, internal("read events", err)
		}
		for i := range evs {
			if wantsEvent(w, evs[i]) {
				return &evs[i], skipTo, nil
			}
			skipTo = evs[i].Seq
		}
		if len(evs) < webhookEventsPage {
			return nil, skipTo, nil
		}
	}
}

// signedPost is a POST of body to url, signed as Standard Webhooks says (webhook-id,
// webhook-timestamp, webhook-signature with secret): webhook deliveries and A2A push
// notifications both go out this way. userAgent names the sender. A secret that cannot
// sign is an internal error; a URL that makes no request is the attempt's failure
// (badRequest, its text what the attempt records).
func (s *Service) signedPost(ctx context.Context, url, secret, id, userAgent string, body []byte) (req *http.Request, badRequest string, err error) {
	ts := s.clock().Unix()
	sig, err := SignWebhook(secret, id, ts, body)
	if err != nil {
		return nil, "", internal("sign webhook", err)
	}
	req, err = http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		return nil, "bad request: " + err.Error(), nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("User-Agent", userAgent+"/"+version.Version)
	req.Header.Set("webhook-id", id)
	req.Header.Set("webhook-timestamp", strconv.FormatInt(ts, 10))
	req.Header.Set("webhook-signature", sig)
	return req, "", nil
}

// sendWebhook POSTs the event frame, exactly as /api/events sends it, signed, and
// describes the outcome (its Attempt is left for the caller).
func (s *Service) sendWebhook(ctx context.Context, w *model.Webhook, e model.Event) (*model.WebhookDelivery, error) {
	body, err := json.Marshal(e) // the stream's live frame (backend/events encode)
	if err != nil {
		return nil, internal("encode event", err)
	}
	req, badRequest, err := s.signedPost(ctx, w.URL, w.Secret, WebhookMessageID(e.ProjectID, e.Seq), "agentdesk-webhooks", body)
	if err != nil {
		return nil, err
	}
	d := &model.WebhookDelivery{WebhookID: w.ID, Seq: e.Seq, EventType: e.Type}
	if badRequest != "" {
		d.Error = badRequest
		d.At = s.clock()
		return d, nil
	}
	start := time.Now()
	resp, err := s.webhookClient.Do(req)
	if err != nil {
		d.Error = describeSendError(err)
	} else {
		status := resp.StatusCode
		d.Status = &status
		excerpt, readErr := io.ReadAll(io.LimitReader(resp.Body, WebhookResponseExcerpt))
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, webhookReadLimit-WebhookResponseExcerpt))
		resp.Body.Close()
		d.Response = strings.ToValidUTF8(string(excerpt), "") // never longer than the excerpt read
		if readErr != nil && status >= 200 && status < 300 {
			d.Error = "reading the answer: " + describeSendError(readErr)
		}
	}
	d.DurationMS = time.Since(start).Milliseconds()
	d.At = s.clock()
	return d, nil
}

// describeSendError says why an attempt got no answer, without Go's wrapping.
func describeSendError(err error) string {
	var refused *refusedAddressError
	if errors.As(err, &refused) {
		return refused.Error() // the rule's own words, without Go's wrapping
	}
	var timeout interface{ Timeout() bool }
	if errors.As(err, &timeout) && timeout.Timeout() {
		return fmt.Sprintf("no answer within %s", WebhookTimeout)
	}
	msg := err.Error()
	if !utf8.ValidString(msg) {
		msg = strings.ToValidUTF8(msg, "\uFFFD")
	}
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return msg
}

// Redeliver sends a delivery's event to its webhook again, now, whatever the
// webhook's state, and records the attempt (attempt 0) (admin). It does not move the
// cursor; if the webhook is waiting to retry and this attempt succeeds, the retry is
// brought forward to now.
func (s *Service) Redeliver(ctx context.Context, p *auth.Principal, deliveryID int64) (*model.WebhookDelivery, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	r := s.store.Read()
	old, err := r.WebhookDelivery(ctx, p.ProjectID, deliveryID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("webhook delivery %d not found", deliveryID)
	}
	if err != nil {
		return nil, internal("load webhook delivery", err)
	}
	w, err := s.loadWebhook(ctx, r, p.ProjectID, old.WebhookID)
	if err != nil {
		return nil, err
	}
	evs, err := r.EventsSince(ctx, p.ProjectID, old.Seq-1, 1)
	if err != nil {
		return nil, internal("read event", err)
	}
	if len(evs) == 0 || evs[0].Seq != old.Seq {
		return nil, errs.Conflicting("event %d is no longer kept (the log keeps events 7 days): it cannot be sent again", old.Seq)
	}
	d, err := s.sendWebhook(ctx, w, evs[0])
	if err != nil {
		return nil, err
	}
	d.Attempt = 0
	err = s.store.Write(context.WithoutCancel(ctx), s.author(p), func(tx *store.Tx) error {
		if err := tx.InsertWebhookDelivery(ctx, d); err != nil {
			return err
		}
		cur, err := tx.WebhookByID(ctx, w.ID)
		if err != nil {
			return err
		}
		if d.OK() && cur.Enabled && cur.NextAttemptAt != nil {
			now := s.clock()
			cur.NextAttemptAt = &now
			return tx.UpdateWebhook(ctx, cur)
		}
		return nil
	})
	if err != nil {
		return nil, internal("record webhook delivery", err)
	}
	s.webhooksChanged()
	return d, nil
}
