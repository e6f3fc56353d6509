package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Browser sessions started with a token (issue 43 item 2, table token_sessions): the web
// UI trades a pasted platform token for a session cookie. A session belongs to its token
// and is good only while the token is; the service decides that (service/tokensession.go).

// TokenSession is a browser session started with a token, found by the hash of its
// cookie's value.
type TokenSession struct {
	ID      int64
	TokenID int64
	// TokenHash is the hash of the token's value, for the service to check the token
	// as it checks a Bearer one.
	TokenHash  []byte
	CSRFToken  string
	CreatedAt  time.Time
	LastSeenAt time.Time
	EndedAt    *time.Time
	// Where it began: the browser's User-Agent and the client address.
	UserAgent, Address string
}

// InsertTokenSession stores a new session of token tokenID under the hash of its value.
func (t *Tx) InsertTokenSession(ctx context.Context, hash []byte, tokenID int64, csrf, userAgent, address string, at time.Time) error {
	_, err := t.exec(ctx, `INSERT INTO token_sessions (id_hash, token_id, csrf_token, created_at, last_seen_at, user_agent, address)
		VALUES ($1, $2, $3, $4, $5, $6, $7)`, hash, tokenID, csrf, fmtTime(at), fmtTime(at), userAgent, address)
	return err
}

// TokenSessionByHash loads a session, ended or not, with its token's hash.
func (r Reader) TokenSessionByHash(ctx context.Context, hash []byte) (*TokenSession, error) {
	var s TokenSession
	var created, seen string
	var ended sql.NullString
	err := r.queryRow(ctx, `SELECT s.id, s.token_id, t.hash, s.csrf_token, s.created_at, s.last_seen_at, s.ended_at, s.user_agent, s.address
		FROM token_sessions s JOIN tokens t ON t.id = s.token_id WHERE s.id_hash = $1`, hash).
		Scan(&s.ID, &s.TokenID, &s.TokenHash, &s.CSRFToken, &created, &seen, &ended, &s.UserAgent, &s.Address)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	s.CreatedAt, s.LastSeenAt, s.EndedAt = parseTime(created), parseTime(seen), parseTimePtr(ended)
	return &s, nil
}

// TouchTokenSession records that a session was used at.
func (t *Tx) TouchTokenSession(ctx context.Context, id int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE token_sessions SET last_seen_at = $1 WHERE id = $2 AND last_seen_at < $3`, fmtTime(at), id, fmtTime(at))
	return err
}

// EndTokenSession ends a session (signed out); ending an ended one changes nothing.
func (t *Tx) EndTokenSession(ctx context.Context, id int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE token_sessions SET ended_at = $1 WHERE id = $2 AND ended_at IS NULL`, fmtTime(at), id)
	return err
}
