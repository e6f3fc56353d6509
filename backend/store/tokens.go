package store

import (
	"context"
	"database/sql"
	"errors"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// InsertToken stores a token by the hash of its value and sets its id; tok.CreatedBy's
// id, if any, is recorded as its maker.
func (t *Tx) InsertToken(ctx context.Context, tok *model.Token, hash []byte) error {
	var createdBy *int64
	if tok.CreatedBy != nil {
		createdBy = &tok.CreatedBy.ID
	}
	res, err := t.insert(ctx,
		`INSERT INTO tokens (project_id, name, type, scopes, hash, hint, created_at, expires_at, created_by) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
		tok.ProjectID, tok.Name, tok.Type, strings.Join(tok.Scopes, " "), hash, tok.Hint,
		fmtTime(tok.CreatedAt), fmtTimePtr(tok.ExpiresAt), createdBy)
	if err != nil {
		return err
	}
	tok.ID, err = res.LastInsertId()
	return err
}

// tokenColumns and tokenFrom read a token with its maker (scanToken).
const (
	tokenColumns = `t.id, t.project_id, t.name, t.type, t.scopes, t.hint, t.created_at, t.expires_at, t.last_used_at, t.revoked_at, u.id, u.name, u.email`
	tokenFrom    = ` FROM tokens t LEFT JOIN users u ON u.id = t.created_by`
)

func scanToken(row interface{ Scan(...any) error }) (*model.Token, error) {
	var tok model.Token
	var scopes, created string
	var expires, lastUsed, revoked, makerName, makerEmail sql.NullString
	var makerID sql.NullInt64
	err := row.Scan(&tok.ID, &tok.ProjectID, &tok.Name, &tok.Type, &scopes, &tok.Hint, &created, &expires, &lastUsed, &revoked,
		&makerID, &makerName, &makerEmail)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	tok.Scopes = strings.Fields(scopes)
	tok.CreatedAt = parseTime(created)
	tok.ExpiresAt, tok.LastUsedAt, tok.RevokedAt = parseTimePtr(expires), parseTimePtr(lastUsed), parseTimePtr(revoked)
	if makerID.Valid {
		tok.CreatedBy = &model.UserRef{ID: makerID.Int64, Name: makerName.String}
		if makerEmail.Valid {
			tok.CreatedBy.Email = &makerEmail.String
		}
	}
	return &tok, nil
}

// TokenByHash finds a token by the hash of its value.
func (r Reader) TokenByHash(ctx context.Context, hash []byte) (*model.Token, error) {
	return scanToken(r.queryRow(ctx, `SELECT `+tokenColumns+tokenFrom+` WHERE t.hash = $1`, hash))
}

// Tokens lists the project's tokens by id.
func (r Reader) Tokens(ctx context.Context, projectID string) ([]model.Token, error) {
	return queryList(ctx, r, scanToken, `SELECT `+tokenColumns+tokenFrom+` WHERE t.project_id = $1 ORDER BY t.id`, projectID)
}

// LiveTokensMadeBy lists the project's tokens that userID made and that are not revoked
// (expired ones included: they end anyway, and revoking them changes nothing).
func (r Reader) LiveTokensMadeBy(ctx context.Context, projectID string, userID int64) ([]model.Token, error) {
	return queryList(ctx, r, scanToken,
		`SELECT `+tokenColumns+tokenFrom+` WHERE t.project_id = $1 AND t.created_by = $2 AND t.revoked_at IS NULL ORDER BY t.id`, projectID, userID)
}

// TouchTokens records when tokens were last used; only ever moves the time forward.
func (t *Tx) TouchTokens(ctx context.Context, used map[int64]time.Time) error {
	for id, at := range used {
		if _, err := t.exec(ctx,
			`UPDATE tokens SET last_used_at = $1 WHERE id = $2 AND (last_used_at IS NULL OR last_used_at < $3)`,
			fmtTime(at), id, fmtTime(at)); err != nil {
			return err
		}
	}
	return nil
}

// RevokeToken marks a token of the project revoked.
func (t *Tx) RevokeToken(ctx context.Context, projectID string, id int64, at time.Time) error {
	res, err := t.exec(ctx,
		`UPDATE tokens SET revoked_at = COALESCE(revoked_at, $1) WHERE project_id = $2 AND id = $3`, fmtTime(at), projectID, id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return ErrNotFound
	}
	return nil
}
