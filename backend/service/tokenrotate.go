package service

import (
	"context"
	"errors"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// RotateToken replaces a token of the principal's project (admin): the old one is
// revoked and a new one made with the same name, type and scopes, in one transaction.
// A token that expired keeps its lifetime: the new one expires as long after now as the
// old one did after its creation; a token without expiry gets none. The new value is
// returned, shown this once. A revoked token cannot be rotated (create a new one), and
// the caller must hold every scope of the token, as for creating it. The new token
// belongs to whoever rotated it (tokenMaker), who is the one holding its value.
func (s *Service) RotateToken(ctx context.Context, p *auth.Principal, id int64) (string, *model.Token, error) {
	if err := require(p, auth.Admin); err != nil {
		return "", nil, err
	}
	now := s.clock()
	value := auth.NewTokenValue()
	var out *model.Token
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		old, err := tx.Token(ctx, p.ProjectID, id)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Missing("token %d not found", id)
		}
		if err != nil {
			return internal("load token", err)
		}
		if old.RevokedAt != nil {
			return errs.Conflicting("token %d is revoked and cannot be rotated; create a new token", id)
		}
		if old.Name == DesktopSessionTokenName { // session.go: a new one comes with each window
			return errs.Conflicting("token %d is the desktop window's session and cannot be rotated; reopening the window replaces it", id)
		}
		for _, sc := range old.Scopes {
			if !mayGrant(p.Scopes, old.Type, sc) {
				return errs.Forbid("cannot rotate a token with the %s scope: the caller does not hold it", sc)
			}
		}
		maker, err := s.tokenMaker(ctx, tx.Reader, p)
		if err != nil {
			return err
		}
		tok := &model.Token{ProjectID: p.ProjectID, Name: old.Name, Type: old.Type, Scopes: old.Scopes,
			Hint: auth.TokenHint(value), CreatedAt: now, CreatedBy: maker}
		if old.ExpiresAt != nil {
			at := now.Add(old.ExpiresAt.Sub(old.CreatedAt))
			tok.ExpiresAt = &at
		}
		if err := tx.RevokeToken(ctx, p.ProjectID, id, now); err != nil {
			return internal("revoke token", err)
		}
		if err := tx.InsertToken(ctx, tok, auth.HashToken(value)); err != nil {
			return internal("create token", err)
		}
		out = tok
		// id is the new token, replaces the one it revoked.
		return tx.AppendEvent(ctx, p.ProjectID, EventTokenRotated, struct {
			*model.Token
			Replaces int64 `json:"replaces"`
		}{tok, id}, now)
	})
	if err != nil {
		return "", nil, err
	}
	return value, out, nil
}
