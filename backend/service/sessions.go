package service

import (
	"context"
	"errors"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/store"
)

// A person's own sessions (issue 18): listed and ended by their owner only, through a
// session of theirs (GET and DELETE /api/me/sessions). Ending one closes its open
// streams within a second, as signing out does: the hub checks credentials again.

// SessionInfo is one of a person's live sessions, as their list shows it.
type SessionInfo struct {
	ID         int64     `json:"id"`
	CreatedAt  time.Time `json:"createdAt"`
	LastSeenAt time.Time `json:"lastSeenAt"`
	UserAgent  string    `json:"userAgent"`
	Address    string    `json:"address"`
	// Current is the session the request came with.
	Current bool `json:"current"`
}

// ownSession checks that p is a person's session and returns it.
func (s *Service) ownSession(ctx context.Context, p *auth.Principal) (*store.Session, error) {
	if p == nil {
		return nil, errs.Unauth("authentication required")
	}
	if p.Kind != auth.KindUser {
		return nil, errs.Forbid("only a person signed in with a browser session has sessions; this request authenticated with a token or agent headers (tokens are revoked instead)")
	}
	sess, err := s.store.Read().SessionByHash(ctx, p.SessionHash)
	if err != nil {
		return nil, storeError(err, "look up session", func() error { return errs.Unauth("unknown session; sign in again at /login") })
	}
	return sess, nil
}

// Sessions lists the caller's live sessions (not ended, not expired), newest first.
func (s *Service) Sessions(ctx context.Context, p *auth.Principal) ([]SessionInfo, error) {
	cur, err := s.ownSession(ctx, p)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	list, err := s.store.Read().UserSessions(ctx, p.UserID, now.Add(-SessionIdle), now.Add(-SessionMaxAge))
	if err != nil {
		return nil, internal("list sessions", err)
	}
	out := make([]SessionInfo, 0, len(list))
	for _, x := range list {
		out = append(out, SessionInfo{ID: x.ID, CreatedAt: x.CreatedAt, LastSeenAt: x.LastSeenAt,
			UserAgent: x.UserAgent, Address: x.Address, Current: x.ID == cur.ID})
	}
	return out, nil
}

// EndOwnSession ends session id of the caller's (another person's, or an unknown id, is
// not found); current says whether it was the one the request came with, whose cookie
// the interface then clears. Ending an ended one of theirs changes nothing.
func (s *Service) EndOwnSession(ctx context.Context, p *auth.Principal, id int64) (current bool, err error) {
	cur, err := s.ownSession(ctx, p)
	if err != nil {
		return false, err
	}
	err = s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		err := tx.EndUserSession(ctx, p.UserID, id, s.clock())
		if errors.Is(err, store.ErrNotFound) {
			return errs.Missing("session %d not found among your sessions", id)
		}
		if err != nil {
			return internal("end session", err)
		}
		return nil
	})
	return err == nil && id == cur.ID, err
}

// EndAllSessions signs the caller out everywhere: every session of the person ends,
// the one the request came with included.
func (s *Service) EndAllSessions(ctx context.Context, p *auth.Principal) error {
	if _, err := s.ownSession(ctx, p); err != nil {
		return err
	}
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if err := tx.EndUserSessions(ctx, p.UserID, s.clock()); err != nil {
			return internal("end sessions", err)
		}
		return nil
	})
}
