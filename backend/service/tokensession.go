package service

import (
	"context"
	"errors"
	"strings"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Browser sessions started with a token (issue 43 item 2): the web UI trades the
// platform token a person pasted for a session cookie (POST /api/session), so that new
// tabs and links are signed in. The cookie is the team mode session's (name, flags,
// lifetimes, CSRF rules); the session acts as its token, with the token's project and
// scopes, and ends when the token does (revoked, rotated away, expired) or on POST
// /logout. The token's value is not kept by the browser nor the server: the session
// keeps the token's id, and the hash of its own value.

// StartTokenSession starts a browser session for the token p authenticated with (as a
// Bearer token: a session does not beget sessions) and returns the cookie's value, never
// stored. Only platform tokens made by hand start one: data tokens are refused at /api
// already, and the desktop window's token lives in its window only.
func (s *Service) StartTokenSession(ctx context.Context, p *auth.Principal, userAgent, address string) (string, error) {
	switch {
	case p == nil:
		return "", errs.Unauth("authentication required")
	case p.Kind != auth.KindToken || p.SessionHash != nil:
		return "", errs.Forbid("a browser session starts from a token: send Authorization: Bearer <token>")
	case p.TokenType != model.TokenPlatform:
		return "", errs.Forbid("a browser session needs a platform token, and this is a %s token", p.TokenType)
	case p.Name == DesktopSessionTokenName:
		return "", errs.Forbid("the desktop window's token does not start browser sessions")
	}
	value := auth.NewSessionValue()
	agent := []rune(strings.ToValidUTF8(userAgent, ""))
	agent = agent[:min(len(agent), MaxUserAgentLen)]
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if err := tx.InsertTokenSession(ctx, auth.HashToken(value), p.TokenID, auth.RandomString(43), string(agent), address, s.clock()); err != nil {
			return internal("create session", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return value, nil
}

// tokenSessionPrincipal is the principal of a live token session, by the hash of its
// cookie's value: its token's, with the session's hash and CSRF token. The token must
// still be good, as a Bearer one must.
func (s *Service) tokenSessionPrincipal(ctx context.Context, hash []byte) (*auth.Principal, error) {
	sess, err := s.store.Read().TokenSessionByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errUnknownSession
	}
	if err != nil {
		return nil, internal("look up session", err)
	}
	if err := sessionEnded(sess.EndedAt, sess.CreatedAt, sess.LastSeenAt, s.clock()); err != nil {
		return nil, err
	}
	p, now, err := s.tokenPrincipal(ctx, sess.TokenHash)
	if errs.CodeOf(err) == errs.Unauthenticated {
		return nil, errs.Unauth("the token this session began with is no longer valid (%s); sign in again", err.Error())
	}
	if err != nil {
		return nil, err
	}
	s.noteTokenUse(p.TokenID, now)
	if now.Sub(sess.LastSeenAt) >= touchEvery {
		err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error { return tx.TouchTokenSession(ctx, sess.ID, now) })
		if err != nil && !store.IsDiskFull(err) { // on a full disk, reads go on untouched
			return nil, internal("record session use", err)
		}
	}
	p.SessionHash, p.CSRFToken = hash, sess.CSRFToken
	return p, nil
}

// endTokenSession ends the token session of a hash, if there is one, on behalf of p
// (nil: nobody in particular).
func (s *Service) endTokenSession(ctx context.Context, p *auth.Principal, hash []byte) error {
	sess, err := s.store.Read().TokenSessionByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return internal("look up session", err)
	}
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if err := tx.EndTokenSession(ctx, sess.ID, s.clock()); err != nil {
			return internal("end session", err)
		}
		return nil
	})
}
