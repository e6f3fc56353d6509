package store

import (
	"context"
	"database/sql"
	"errors"
	"time"
)

// Team mode (issue 18): people signed in with OpenID Connect (users with an issuer and
// subject), their browser sessions (table sessions) and the logins under way (table
// oidc_logins).

// Person is a user as a session sees it.
type Person struct {
	ID     int64
	Name   string
	Email  string // "" when the user has none
	Issuer string // "" until the user first signs in
}

// Person loads a user by id.
func (r Reader) Person(ctx context.Context, id int64) (*Person, error) {
	var p Person
	var email, issuer sql.NullString
	err := r.queryRow(ctx, `SELECT id, name, email, oidc_issuer FROM users WHERE id = $1`, id).Scan(&p.ID, &p.Name, &email, &issuer)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	if err != nil {
		return nil, err
	}
	p.Email, p.Issuer = email.String, issuer.String
	return &p, nil
}

// UserByOIDC finds the user a provider knows as subject.
func (r Reader) UserByOIDC(ctx context.Context, issuer, subject string) (int64, error) {
	var id int64
	err := r.queryRow(ctx, `SELECT id FROM users WHERE oidc_issuer = $1 AND oidc_subject = $2`, issuer, subject).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, ErrNotFound
	}
	return id, err
}

// LinkUser ties a user to the provider's (issuer, subject) and refreshes its email and
// name from the ID token; done at every sign-in. email may be nil. From then on every
// project shows the person's own name, not the one it gave (memberName).
func (t *Tx) LinkUser(ctx context.Context, id int64, issuer, subject, name string, email *string) error {
	if err := t.execOne(ctx, `UPDATE users SET oidc_issuer = $1, oidc_subject = $2, name = $3, email = $4 WHERE id = $5`,
		issuer, subject, name, email, id); err != nil {
		return err
	}
	_, err := t.exec(ctx, `UPDATE project_members SET name = NULL WHERE user_id = $1 AND name IS NOT NULL`, id)
	return err
}

// Membership is one project a user belongs to, with the role there.
type Membership struct {
	ProjectID   string `json:"projectId"`
	ProjectName string `json:"projectName"`
	Role        string `json:"role"`
}

// Memberships lists the projects of a user, in the order the user joined them (the
// first is a session's default project): by join_order among those made at the same
// moment, then by project id (two servers may give two memberships one join_order).
func (r Reader) Memberships(ctx context.Context, userID int64) ([]Membership, error) {
	rows, err := r.query(ctx, `SELECT m.project_id, p.name, m.role FROM project_members m JOIN projects p ON p.id = m.project_id
		WHERE m.user_id = $1 ORDER BY m.created_at, m.join_order, m.project_id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []Membership{}
	for rows.Next() {
		var m Membership
		if err := rows.Scan(&m.ProjectID, &m.ProjectName, &m.Role); err != nil {
			return nil, err
		}
		out = append(out, m)
	}
	return out, rows.Err()
}

// Session is a browser session, found by the hash of its cookie's value.
type Session struct {
	ID         int64
	UserID     int64
	CSRFToken  string
	CreatedAt  time.Time
	LastSeenAt time.Time
	EndedAt    *time.Time
	// Where it signed in from: the browser's User-Agent and the client address ("" for
	// sessions begun before they were recorded).
	UserAgent, Address string
	// IDToken is the provider's raw ID token of the sign-in, for sign-out's
	// id_token_hint; "" once the session ended, or for sessions begun without one.
	IDToken string
}

// InsertSession stores a new session under the hash of its value, with the provider's
// ID token ("" for none).
func (t *Tx) InsertSession(ctx context.Context, hash []byte, userID int64, csrf, userAgent, address, idToken string, at time.Time) error {
	_, err := t.exec(ctx, `INSERT INTO sessions (id_hash, user_id, csrf_token, created_at, last_seen_at, user_agent, address, id_token) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`,
		hash, userID, csrf, fmtTime(at), fmtTime(at), userAgent, address, idToken)
	return err
}

const sessionColumns = `id, user_id, csrf_token, created_at, last_seen_at, ended_at, user_agent, address, id_token`

func scanSession(row rowScanner) (*Session, error) {
	var s Session
	var created, seen string
	var ended, agent, address, idToken sql.NullString
	if err := row.Scan(&s.ID, &s.UserID, &s.CSRFToken, &created, &seen, &ended, &agent, &address, &idToken); err != nil {
		return nil, err
	}
	s.CreatedAt, s.LastSeenAt, s.EndedAt = parseTime(created), parseTime(seen), parseTimePtr(ended)
	s.UserAgent, s.Address, s.IDToken = agent.String, address.String, idToken.String
	return &s, nil
}

// SessionByHash loads a session, ended or not.
func (r Reader) SessionByHash(ctx context.Context, hash []byte) (*Session, error) {
	s, err := scanSession(r.queryRow(ctx, `SELECT `+sessionColumns+` FROM sessions WHERE id_hash = $1`, hash))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotFound
	}
	return s, err
}

// UserSessions lists a user's live sessions, newest first: not ended, used since
// idleBefore, begun since oldBefore.
func (r Reader) UserSessions(ctx context.Context, userID int64, idleBefore, oldBefore time.Time) ([]Session, error) {
	return queryList(ctx, r, scanSession, `SELECT `+sessionColumns+` FROM sessions
		WHERE user_id = $1 AND ended_at IS NULL AND last_seen_at > $2 AND created_at > $3 ORDER BY id DESC`,
		userID, fmtTime(idleBefore), fmtTime(oldBefore))
}

// EndUserSession ends session id if it is one of the user's; ErrNotFound if it is not.
// Ending an ended one changes nothing.
func (t *Tx) EndUserSession(ctx context.Context, userID, id int64, at time.Time) error {
	return t.execOne(ctx, `UPDATE sessions SET ended_at = COALESCE(ended_at, $1), id_token = NULL WHERE id = $2 AND user_id = $3`, fmtTime(at), id, userID)
}

// EndUserSessions ends every session of a user ("sign out everywhere").
func (t *Tx) EndUserSessions(ctx context.Context, userID int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE sessions SET ended_at = $1, id_token = NULL WHERE user_id = $2 AND ended_at IS NULL`, fmtTime(at), userID)
	return err
}

// TouchSession records that a session was used at.
func (t *Tx) TouchSession(ctx context.Context, id int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE sessions SET last_seen_at = $1 WHERE id = $2 AND last_seen_at < $3`, fmtTime(at), id, fmtTime(at))
	return err
}

// EndSession ends a session (signed out) and forgets its ID token; ending an ended one
// changes nothing.
func (t *Tx) EndSession(ctx context.Context, id int64, at time.Time) error {
	_, err := t.exec(ctx, `UPDATE sessions SET ended_at = $1, id_token = NULL WHERE id = $2 AND ended_at IS NULL`, fmtTime(at), id)
	return err
}

// PruneSessions deletes the sessions that can no longer be used, people's and tokens'
// (tokensessions.go): ended by endedBefore, unused since idleBefore, or begun before
// oldBefore. The session of a revoked or expired token, refused from then on, goes once
// idle. It returns how many went.
func (t *Tx) PruneSessions(ctx context.Context, endedBefore, idleBefore, oldBefore time.Time) (int64, error) {
	var n int64
	for _, table := range []string{"sessions", "token_sessions"} {
		res, err := t.exec(ctx, `DELETE FROM `+table+` WHERE ended_at <= $1 OR last_seen_at <= $2 OR created_at <= $3`,
			fmtTime(endedBefore), fmtTime(idleBefore), fmtTime(oldBefore))
		if err != nil {
			return 0, err
		}
		gone, err := res.RowsAffected()
		if err != nil {
			return 0, err
		}
		n += gone
	}
	return n, nil
}

// pruneLogins deletes the logins under way begun before a time, by the index on
// created_at (migration 00028).
const pruneLogins = `DELETE FROM oidc_logins WHERE created_at < $1`

// PruneLogins deletes the logins under way begun before stale.
func (t *Tx) PruneLogins(ctx context.Context, stale time.Time) error {
	_, err := t.exec(ctx, pruneLogins, fmtTime(stale))
	return err
}

// PendingLogins counts the logins under way and says when the oldest began (zero when
// there is none).
func (r Reader) PendingLogins(ctx context.Context) (n int, oldest time.Time, err error) {
	var first sql.NullString
	if err := r.queryRow(ctx, `SELECT COUNT(*), MIN(created_at) FROM oidc_logins`).Scan(&n, &first); err != nil {
		return 0, time.Time{}, err
	}
	if first.Valid {
		oldest = parseTime(first.String)
	}
	return n, oldest, nil
}

// InsertLogin stores a login under way.
func (t *Tx) InsertLogin(ctx context.Context, state, nonce, verifier string, at time.Time) error {
	_, err := t.exec(ctx, `INSERT INTO oidc_logins (state, nonce, verifier, created_at) VALUES ($1, $2, $3, $4)`,
		state, nonce, verifier, fmtTime(at))
	return err
}

// TakeLogin removes a login under way and returns its nonce, PKCE verifier and start:
// a state is good for one callback only. ErrNotFound for an unknown or used state.
func (t *Tx) TakeLogin(ctx context.Context, state string) (nonce, verifier string, at time.Time, err error) {
	var created string
	err = t.queryRow(ctx, `DELETE FROM oidc_logins WHERE state = $1 RETURNING nonce, verifier, created_at`, state).Scan(&nonce, &verifier, &created)
	if errors.Is(err, sql.ErrNoRows) {
		return "", "", time.Time{}, ErrNotFound
	}
	return nonce, verifier, parseTime(created), err
}
