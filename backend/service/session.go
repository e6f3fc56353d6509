package service

import (
	"context"
	"slices"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// DesktopSessionTokenName names the token of a desktop window's session. It is reserved:
// CreateToken refuses it, so that sweeping away the sessions of windows that did not
// close cleanly can never revoke a token someone made by hand.
const DesktopSessionTokenName = "desktop window session"

// DesktopSession is the credential of an open desktop window: a platform token of the
// first project (Personal) with every platform scope. Its value lives only in the memory
// of the process that shows the window; the database keeps its hash, like every token's.
type DesktopSession struct {
	Token     string // the value; never stored, never logged
	TokenID   int64
	ProjectID string
}

// StartDesktopSession signs the desktop window in as the local owner of the first
// project, without asking: it mints a fresh token with every platform scope (admin
// included). Only the local owner, the process that runs the window, may call it; the
// window's JavaScript receives the value through the window's binding, which no other
// process can call. Sessions left by a window that did not close cleanly (killed, power
// lost) are revoked first, in the same transaction: at most one is ever valid.
func (s *Service) StartDesktopSession(ctx context.Context, p *auth.Principal) (*DesktopSession, error) {
	if p == nil || p.Kind != auth.KindOwner {
		return nil, errs.Forbid("only the local owner opens a desktop session")
	}
	value := auth.NewTokenValue()
	now := s.clock()
	var out *DesktopSession
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		projects, err := tx.Projects(ctx)
		if err != nil {
			return internal("list projects", err)
		}
		if len(projects) == 0 {
			return errs.Missing("no project yet: the server creates the Personal project on first start")
		}
		project := projects[0] // the oldest: Personal, made on first start
		toks, err := tx.Tokens(ctx, project.ID)
		if err != nil {
			return internal("list tokens", err)
		}
		for _, t := range toks {
			if t.Name == DesktopSessionTokenName && t.RevokedAt == nil {
				if err := tx.RevokeToken(ctx, project.ID, t.ID, now); err != nil {
					return internal("revoke a stale desktop session", err)
				}
			}
		}
		tok := &model.Token{ProjectID: project.ID, Name: DesktopSessionTokenName, Type: model.TokenPlatform,
			Scopes: slices.Sorted(slices.Values(auth.PlatformScopes)), Hint: auth.TokenHint(value), CreatedAt: now}
		if err := tx.InsertToken(ctx, tok, auth.HashToken(value)); err != nil {
			return internal("create the desktop session token", err)
		}
		out = &DesktopSession{Token: value, TokenID: tok.ID, ProjectID: project.ID}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// EndDesktopSession revokes the window's token when the window closes: from then on it
// is refused like any revoked token, even by a process that somehow learnt the value.
func (s *Service) EndDesktopSession(ctx context.Context, p *auth.Principal, sess *DesktopSession) error {
	if p == nil || p.Kind != auth.KindOwner {
		return errs.Forbid("only the local owner ends a desktop session")
	}
	if sess == nil {
		return nil
	}
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if err := tx.RevokeToken(ctx, sess.ProjectID, sess.TokenID, s.clock()); err != nil {
			return internal("revoke the desktop session token", err)
		}
		return nil
	})
}
