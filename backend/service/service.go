package service

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Service is the rules over one store.
type Service struct {
	store *store.Store
	now   func() time.Time
	actor audit.Actor // Options.Actor

	usedMu sync.Mutex
	used   map[int64]time.Time // token id -> last use not yet written (FlushTokenUse)

	seenMu  sync.Mutex
	seen    map[int64]time.Time // agent id -> last contact noted (presence.go)
	seenNew map[int64]time.Time // the same, not yet written

	vector *Knowledge      // knowledge bases, their own subsystem (vector.go)
	jobs   jobsState       // the job scheduler's wake-up signal (jobs.go)
	hooks  webhooksState   // the webhook deliverer's wake-up and whether it has work (webhooks.go)
	oidc   auth.OIDC       // team mode (team.go); zero when off
	limits *addressLimiter // refused credentials per client address (ratelimit.go)
	logins *addressLimiter // sign-ins begun (GET /login) per client address (ratelimit.go)
	// onDelivery is told of each webhook delivery attempt recorded (the metrics).
	onDelivery func(model.WebhookDelivery)
	// webhooksAllowPrivate lets webhooks reach non-public addresses (webhook_network.go);
	// webhookClient sends every delivery, refusing them unless it is set.
	webhooksAllowPrivate bool
	webhookClient        *http.Client
	// remoteClient talks to remote A2A agents (a2aremote.go): the webhooks' rule on
	// addresses, no redirects, no overall timeout (a stream lasts; each attempt has its
	// own deadline).
	remoteClient *http.Client
	remote       wakeUp // the remote agents' sender's wake-up (a2aremote.go)
}

// Options tune a Service; the zero value is what agentdesk runs with.
type Options struct {
	Now func() time.Time // the clock; tests inject one
	// Embedder embeds knowledge-base text; nil is the built-in feature-hashing embedder.
	Embedder Embedder
	// OIDC turns team mode on (people sign in with OpenID Connect); zero: off.
	OIDC auth.OIDC
	// OnWebhookDelivery, if set, is told of each webhook delivery attempt once it is
	// recorded (the metrics, backend/metrics). It must not block.
	OnWebhookDelivery func(model.WebhookDelivery)
	// WebhooksAllowPrivate lets webhooks reach loopback, private, link-local and CGNAT
	// addresses (--webhooks-allow-private; the desktop window). Off, they reach the
	// public internet only (webhook_network.go).
	WebhooksAllowPrivate bool
	// Actor is who makes the changes no principal asks for (background work, sign-ins)
	// or that a principal made in code asks for: zero is the system; a command of the
	// CLI makes them as the local owner, through the CLI.
	Actor audit.Actor
}

// IdempotencyKeyTTL is how long an Idempotency-Key is remembered (the contract says at
// least 24 hours; backend/jobs prunes hourly, so a key lives 24 to 25 hours).
const IdempotencyKeyTTL = 24 * time.Hour

// New returns the service. Its background work (recording token use, forgetting old
// idempotency keys) is run by backend/jobs, through FlushTokenUse and
// PruneIdempotencyKeys.
func New(st *store.Store, opts Options) *Service {
	s := &Service{store: st, now: opts.Now, used: map[int64]time.Time{},
		seen: map[int64]time.Time{}, seenNew: map[int64]time.Time{}, oidc: opts.OIDC, limits: newFailureLimiter(), logins: newLoginLimiter(),
		onDelivery: opts.OnWebhookDelivery, webhooksAllowPrivate: opts.WebhooksAllowPrivate,
		webhookClient: newWebhookClient(opts.WebhooksAllowPrivate), remoteClient: newRemoteClient(opts.WebhooksAllowPrivate)}
	if s.now == nil {
		s.now = time.Now
	}
	if s.actor = opts.Actor; s.actor == (audit.Actor{}) {
		s.actor = audit.System
	}
	s.vector = newKnowledge(st, s.clock, s.author, opts.Embedder)
	return s
}

// Close writes the token use the service still holds. Stop the background work first.
func (s *Service) Close() {
	if err := s.FlushTokenUse(context.Background()); err != nil {
		slog.Warn("record token use", "err", err)
	}
}

// Store is the store under the service, for the few callers that need the file itself
// (backup, health checks).
func (s *Service) Store() *store.Store { return s.store }

// PruneIdempotencyKeys forgets the Idempotency-Keys older than IdempotencyKeyTTL.
func (s *Service) PruneIdempotencyKeys(ctx context.Context) error {
	before := s.clock().Add(-IdempotencyKeyTTL)
	return s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		_, err := tx.PruneIdempotencyKeys(ctx, before)
		return err
	})
}

// clock is the current time at the store's precision (microseconds, UTC), so that an
// object returned by a write equals the same object read back.
func (s *Service) clock() time.Time { return s.now().UTC().Truncate(time.Microsecond) }

// require checks that the principal holds scope. (Data tokens never get here outside
// the knowledge bases: Authenticate takes them on /api/vector only.)
func require(p *auth.Principal, scope string) error {
	if p == nil {
		return errs.Unauth("authentication required")
	}
	if p.Has(scope) {
		return nil
	}
	return errs.Forbid("this request needs the %s scope, which the caller does not hold", scope)
}

// storeError is the caller's error for the error of a store call: missing() when there
// is no such row, an internal error saying what failed otherwise, nil for nil.
func storeError(err error, what string, missing func() error) error {
	if errors.Is(err, store.ErrNotFound) {
		return missing()
	}
	if err != nil {
		return internal(what, err)
	}
	return nil
}

// internal wraps an unexpected failure; errs.Public hides its text from callers.
func internal(what string, err error) error {
	var e *errs.Error
	if errors.As(err, &e) {
		return err
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("%s: %w", what, err)
}

// checkText validates a text field: required (non-blank) if asked, at most max characters.
func checkText(field, v string, required bool, maxLen int) error {
	if required && strings.TrimSpace(v) == "" {
		return errs.Invalid("%s is required and must not be empty", field)
	}
	if !utf8.ValidString(v) {
		return errs.Invalid("%s must be valid UTF-8 text", field)
	}
	if n := utf8.RuneCountInString(v); n > maxLen {
		return errs.Invalid("%s is too long: %d characters, at most %d", field, n, maxLen)
	}
	return nil
}

// PruneEventsBefore forgets the events written before a time, as retention does. Only
// the local owner may call it (tests and maintenance).
func (s *Service) PruneEventsBefore(ctx context.Context, p *auth.Principal, before time.Time) error {
	if p == nil || p.Kind != auth.KindOwner {
		return errs.Forbid("only the local owner can prune events")
	}
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		_, err := tx.PruneEvents(ctx, before)
		return err
	})
}
