package service

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"strings"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// A2A push notification configs: an A2A client asks to be told of a task's changes at a
// URL (tasks/pushNotificationConfig/set, or a config in message/send). They are
// delivered by the webhook machinery: each config has a cursor on the project's event
// log, as a webhook has; every change of its task is a POST of the task (as tasks/get
// shows it) to the URL, signed as webhooks are (Standard Webhooks; the key is the
// config's token), retried with WebhookBackoff, to the addresses webhooks may reach.
// After WebhookFailingFor of failures the config is dropped.

// Bounds of a push config.
const (
	MaxPushConfigsPerTask = 10
	MaxPushConfigIDLen    = 200
	MaxPushTokenLen       = 1024
)

// A2APushConfig is an A2A push notification config of a task (a2a.PushConfig).
type A2APushConfig = a2a.PushConfig

// pushSecret is the signing secret of a config's deliveries: its token, as a webhook
// secret (whsec_ and base64), so that the receiver verifies them with the token it chose.
func pushSecret(token string) string {
	return WebhookSecretPrefix + base64.StdEncoding.EncodeToString([]byte(token))
}

func randomToken() string {
	b := make([]byte, 24)
	if _, err := rand.Read(b); err != nil {
		panic("crypto/rand failed: " + err.Error())
	}
	return base64.RawURLEncoding.EncodeToString(b)
}

// pushConfigOf is a stored config as A2A shows it.
func pushConfigOf(c *store.PushConfig) *A2APushConfig {
	out := &A2APushConfig{ID: c.ConfigID, URL: c.URL, Token: c.Token}
	if c.Auth != "" {
		out.Auth = &a2a.PushAuthInfo{}
		_ = json.Unmarshal([]byte(c.Auth), out.Auth)
	}
	return out
}

// SetA2APushConfig is tasks/pushNotificationConfig/set (task:write): the task of the
// agent named agentName is pushed to in.URL from its next change on. Without an id the
// config gets one; without a token, one is made (the answer carries it): the token signs
// the deliveries. A config of the same id is replaced.
func (s *Service) SetA2APushConfig(ctx context.Context, p *auth.Principal, agentName string, taskID int64, in A2APushConfig) (*A2APushConfig, error) {
	if err := require(p, auth.TaskWrite); err != nil {
		return nil, err
	}
	if err := s.CheckA2APushConfig(ctx, in); err != nil {
		return nil, err
	}
	if in.ID == "" {
		in.ID = randomToken()
	}
	if in.Token == "" {
		in.Token = randomToken()
	}
	var auth string
	if in.Auth != nil {
		b, err := json.Marshal(in.Auth)
		if err != nil {
			return nil, errs.Invalid("authentication: %v", err)
		}
		auth = string(b)
	}
	var out *A2APushConfig
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if _, err := s.a2aTask(ctx, tx.Reader, p, agentName, taskID); err != nil {
			return err
		}
		list, err := tx.PushConfigs(ctx, p.ProjectID, taskID)
		if err != nil {
			return internal("list push configs", err)
		}
		if len(list) >= MaxPushConfigsPerTask && !slices.ContainsFunc(list, func(c store.PushConfig) bool { return c.ConfigID == in.ID }) {
			return errs.Invalid("task %d has %d push notification configs already, the most it may have", taskID, MaxPushConfigsPerTask)
		}
		cursor, err := tx.LastEventSeq(ctx, p.ProjectID)
		if err != nil {
			return internal("read events", err)
		}
		c := &store.PushConfig{ProjectID: p.ProjectID, TaskID: taskID, ConfigID: in.ID, URL: in.URL, Token: in.Token,
			Auth: auth, Secret: pushSecret(in.Token), Cursor: cursor, CreatedAt: s.clock()}
		if err := tx.PutPushConfig(ctx, c); err != nil {
			return internal("store push config", err)
		}
		out = pushConfigOf(c)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// CheckA2APushConfig refuses a push config that SetA2APushConfig would refuse for what
// it says (its URL, id or token), so that a send carrying one is refused before it does
// anything.
func (s *Service) CheckA2APushConfig(ctx context.Context, in A2APushConfig) error {
	if err := s.checkWebhookURL(ctx, in.URL); err != nil {
		return err
	}
	if err := checkText("id", in.ID, false, MaxPushConfigIDLen); err != nil {
		return err
	}
	return checkText("token", in.Token, false, MaxPushTokenLen)
}

// A2APushConfigs is tasks/pushNotificationConfig/list (task:read).
func (s *Service) A2APushConfigs(ctx context.Context, p *auth.Principal, agentName string, taskID int64) ([]*A2APushConfig, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	r := s.store.Read()
	if _, err := s.a2aTask(ctx, r, p, agentName, taskID); err != nil {
		return nil, err
	}
	list, err := r.PushConfigs(ctx, p.ProjectID, taskID)
	if err != nil {
		return nil, internal("list push configs", err)
	}
	out := make([]*A2APushConfig, len(list))
	for i := range list {
		out[i] = pushConfigOf(&list[i])
	}
	return out, nil
}

// A2APushConfig is tasks/pushNotificationConfig/get (task:read): the config of that id;
// without one, the task's only config.
func (s *Service) A2APushConfig(ctx context.Context, p *auth.Principal, agentName string, taskID int64, configID string) (*A2APushConfig, error) {
	list, err := s.A2APushConfigs(ctx, p, agentName, taskID)
	if err != nil {
		return nil, err
	}
	for _, c := range list {
		if c.ID == configID || (configID == "" && len(list) == 1) {
			return c, nil
		}
	}
	if configID == "" {
		return nil, errs.Missing("task %d has %d push notification configs: name one by its id", taskID, len(list))
	}
	return nil, errs.Missing("task %d has no push notification config %q", taskID, configID)
}

// DeleteA2APushConfig is tasks/pushNotificationConfig/delete (task:write).
func (s *Service) DeleteA2APushConfig(ctx context.Context, p *auth.Principal, agentName string, taskID int64, configID string) error {
	if err := require(p, auth.TaskWrite); err != nil {
		return err
	}
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if _, err := s.a2aTask(ctx, tx.Reader, p, agentName, taskID); err != nil {
			return err
		}
		err := tx.DeletePushConfig(ctx, p.ProjectID, taskID, configID)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Missing("task %d has no push notification config %q", taskID, configID)
		}
		if err != nil {
			return internal("delete push config", err)
		}
		return nil
	})
}

// DuePushConfigs lists the push configs with events to look at now, by id.
func (s *Service) DuePushConfigs(ctx context.Context) ([]int64, error) {
	list, err := s.store.Read().DuePushConfigs(ctx, s.clock())
	if err != nil {
		return nil, internal("list due push configs", err)
	}
	ids := make([]int64, len(list))
	for i, c := range list {
		ids[i] = c.ID
	}
	return ids, nil
}

// PushBody renders a task as a push notification's body: the task as tasks/get shows
// it (backend/a2a gives it).
type PushBody func(*model.Task) ([]byte, error)

// DeliverA2APush makes one attempt at the next change of the config's task after its
// cursor: the task as it now is, POSTed and signed; a 2xx moves the cursor past the
// change, anything else sets the next attempt by WebhookBackoff, or drops the config
// once it has failed for WebhookFailingFor. more is true when the attempt succeeded or
// there was nothing to send up to an event not of the task (the next may follow).
func (s *Service) DeliverA2APush(ctx context.Context, id int64, render PushBody) (more bool, err error) {
	r := s.store.Read()
	c, err := r.PushConfigByID(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	}
	if err != nil {
		return false, internal("load push config", err)
	}
	if c.NextAttemptAt != nil && c.NextAttemptAt.After(s.clock()) {
		return false, nil
	}
	seq, found, err := s.nextTaskEvent(ctx, r, c)
	if err != nil || !found {
		if err == nil && seq > c.Cursor {
			c.Cursor = seq
			err = s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error { return ignoreMissing(tx.UpdatePushConfig(ctx, c)) })
		}
		return false, err
	}
	task, err := s.loadTask(ctx, r, c.ProjectID, c.TaskID)
	if errs.CodeOf(err) == errs.NotFound {
		return false, nil // deleted: its configs go with it
	}
	if err != nil {
		return false, err
	}
	body, err := render(task)
	if err != nil {
		return false, internal("render push notification", err)
	}
	failure := s.sendPush(ctx, c, seq, body)
	if ctx.Err() != nil {
		return false, ctx.Err() // stopping: the attempt does not count
	}
	now := s.clock()
	dropped := false
	if failure == "" {
		c.Cursor, c.Attempts, c.FailingSince, c.NextAttemptAt = seq, 0, nil, nil
	} else {
		c.Attempts++
		if c.FailingSince == nil {
			c.FailingSince = &now
		}
		deadline := c.FailingSince.Add(WebhookFailingFor)
		next := now.Add(webhookBackoff(c.Attempts))
		if next.After(deadline) {
			next = deadline // the last attempt, three days after the first failure
		}
		c.NextAttemptAt = &next
		dropped = !now.Before(deadline)
	}
	err = s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		if dropped {
			return ignoreMissing(tx.DeletePushConfig(ctx, c.ProjectID, c.TaskID, c.ConfigID))
		}
		return ignoreMissing(tx.UpdatePushConfig(ctx, c))
	})
	if err != nil {
		return false, internal("record push notification", err)
	}
	if dropped {
		slog.Warn("a2a push config dropped after failing for 3 days", "task", c.TaskID, "url", c.URL, "last", failure)
	}
	return failure == "", nil
}

// nextTaskEvent finds the first change of the config's task after its cursor: its seq
// and found; otherwise seq is how far the events looked at go (the cursor may move
// there).
func (s *Service) nextTaskEvent(ctx context.Context, r store.Reader, c *store.PushConfig) (seq int64, found bool, err error) {
	seq = c.Cursor
	first, last, err := r.EventBounds(ctx, c.ProjectID)
	if err != nil {
		return 0, false, internal("read events", err)
	}
	if first == 0 { // none kept
		return max(seq, last), false, nil
	}
	seq = max(seq, first-1) // pruned events are skipped
	for {
		evs, err := r.EventsSince(ctx, c.ProjectID, seq, webhookEventsPage)
		if err != nil {
			return 0, false, internal("read events", err)
		}
		for _, e := range evs {
			if taskEventOf(e) == c.TaskID {
				return e.Seq, true, nil
			}
			seq = e.Seq
		}
		if len(evs) < webhookEventsPage {
			return seq, false, nil
		}
	}
}

// taskEventOf is the task a task.created or task.updated event is of; 0 for any other.
func taskEventOf(e model.Event) int64 {
	if e.Type != EventTaskCreated && e.Type != EventTaskUpdated {
		return 0
	}
	var data struct {
		ID int64 `json:"id"`
	}
	switch d := e.Data.(type) {
	case json.RawMessage:
		_ = json.Unmarshal(d, &data)
	case model.TaskEvent:
		return d.Task.ID
	}
	return data.ID
}

// sendPush POSTs a push notification: the body, signed as a webhook delivery is (its
// webhook-id that of the event), with the config's token in X-A2A-Notification-Token
// and, when the config asks for it, its credentials as a Bearer token. It returns why
// the attempt failed, "" when it succeeded (2xx).
func (s *Service) sendPush(ctx context.Context, c *store.PushConfig, seq int64, body []byte) string {
	req, badRequest, err := s.signedPost(ctx, c.URL, c.Secret, WebhookMessageID(c.ProjectID, seq), "agentdesk-a2a", body)
	if err != nil {
		return err.Error()
	}
	if badRequest != "" {
		return badRequest
	}
	req.Header.Set("X-A2A-Notification-Token", c.Token)
	if cfg := pushConfigOf(c); cfg.Auth != nil && cfg.Auth.Credentials != "" &&
		slices.ContainsFunc(cfg.Auth.Schemes, func(s string) bool { return strings.EqualFold(s, "bearer") }) {
		req.Header.Set("Authorization", "Bearer "+cfg.Auth.Credentials)
	}
	resp, err := s.webhookClient.Do(req)
	if err != nil {
		return describeSendError(err)
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, webhookReadLimit))
	resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return fmt.Sprintf("HTTP %d", resp.StatusCode)
	}
	return ""
}
