package service

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// CreateTokenInput describes a token to create.
type CreateTokenInput struct {
	Name      string
	Type      string // platform (default) or data
	Scopes    []string
	ExpiresAt *time.Time
}

// Events of tokens and projects: admin callers receive them, and they make the
// activity trail of who created, rotated or revoked which credential. Their data is
// the token's record (name, scopes, hint), never its value.
const (
	EventTokenCreated   = "token.created"
	EventTokenRevoked   = "token.revoked"
	EventTokenRotated   = "token.rotated"
	EventProjectCreated = "project.created"
)

// CreateToken makes a token in the principal's project and returns its value, which is
// never stored and cannot be shown again. A caller can only grant scopes it holds, except
// that admin covers the data scopes (vector:*): admins run the knowledge bases already
// (GraphQL), and platform tokens and sessions never hold vector scopes themselves, so
// without this no one in the web UI could make a data token.
func (s *Service) CreateToken(ctx context.Context, p *auth.Principal, in CreateTokenInput) (string, *model.Token, error) {
	if err := require(p, auth.Admin); err != nil {
		return "", nil, err
	}
	if in.Type == "" {
		in.Type = model.TokenPlatform
	}
	if in.Type != model.TokenPlatform && in.Type != model.TokenData {
		return "", nil, errs.Invalid("token type %q is not valid: use platform or data", in.Type)
	}
	if err := checkText("name", in.Name, true, 200); err != nil {
		return "", nil, err
	}
	if in.Name == DesktopSessionTokenName { // session.go: the desktop window's own
		return "", nil, errs.Invalid("the token name %q is reserved for the desktop window; choose another", in.Name)
	}
	scopes, problem := auth.CheckScopes(in.Type, in.Scopes)
	if problem != "" {
		return "", nil, errs.Invalid("%s", problem)
	}
	for _, sc := range scopes {
		if !mayGrant(p.Scopes, in.Type, sc) {
			return "", nil, errs.Forbid("cannot grant the %s scope: the caller does not hold it", sc)
		}
	}
	now := s.clock()
	if in.ExpiresAt != nil && !in.ExpiresAt.After(now) {
		return "", nil, errs.Invalid("expiry must be in the future")
	}
	value := auth.NewTokenValue()
	tok := &model.Token{ProjectID: p.ProjectID, Name: in.Name, Type: in.Type, Scopes: scopes,
		Hint: auth.TokenHint(value), CreatedAt: now, ExpiresAt: in.ExpiresAt}
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if _, err := s.project(ctx, tx.Reader, p.ProjectID); err != nil {
			return err
		}
		var err error
		if tok.CreatedBy, err = s.tokenMaker(ctx, tx.Reader, p); err != nil {
			return err
		}
		if err := tx.InsertToken(ctx, tok, auth.HashToken(value)); err != nil {
			return internal("create token", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventTokenCreated, tok, now) // the record, never the value
	})
	if err != nil {
		return "", nil, err
	}
	return value, tok, nil
}

// mayGrant reports whether a caller holding the scopes held may put scope on a token of
// tokenType: it holds the scope itself, or, on a data token, admin (see CreateToken).
// A token's maker must keep that right for the token to live (members.go).
func mayGrant(held []string, tokenType, scope string) bool {
	return slices.Contains(held, scope) || tokenType == model.TokenData && slices.Contains(held, auth.Admin)
}

// tokenMaker is the person a token made or rotated by p belongs to: the signed-in
// person, or the maker of the token p holds, so that a person's token cannot make one
// that outlives their rights. Nil for the local owner (the CLI, the desktop window),
// whose tokens belong to no one.
func (s *Service) tokenMaker(ctx context.Context, r store.Reader, p *auth.Principal) (*model.UserRef, error) {
	var id int64
	switch p.Kind {
	case auth.KindUser:
		id = p.UserID
	case auth.KindToken:
		id = p.TokenMaker
	}
	if id == 0 {
		return nil, nil
	}
	person, err := r.Person(ctx, id)
	if err != nil {
		return nil, internal("load the token's maker", err)
	}
	maker := &model.UserRef{ID: person.ID, Name: person.Name}
	if person.Email != "" {
		maker.Email = &person.Email
	}
	return maker, nil
}

// AuthenticateToken resolves a token value to its principal: the token case of
// Authenticate, which interfaces call (it also decides where which token is taken).
// Unknown, revoked and expired tokens get 401s that say which, never anything about
// other tokens.
func (s *Service) AuthenticateToken(ctx context.Context, value string) (*auth.Principal, error) {
	if !auth.LooksLikeToken(value) {
		if strings.HasPrefix(value, auth.TokenPrefix) { // adk_ and junk: no such token
			return nil, errs.Unauth(unknownToken)
		}
		return nil, errs.Unauth("the bearer token is not an agentdesk token (they start with %q)", auth.TokenPrefix)
	}
	// The lookup is by SHA-256 of the value: the database never compares secrets
	// themselves, so its timing reveals nothing usable about a valid token.
	p, now, err := s.tokenPrincipal(ctx, auth.HashToken(value))
	if err != nil {
		return nil, err
	}
	s.noteTokenUse(p.TokenID, now)
	return p, nil
}

// noteTokenUse records that token id was used at now, for FlushTokenUse to write.
func (s *Service) noteTokenUse(id int64, at time.Time) {
	s.usedMu.Lock()
	s.used[id] = at
	s.usedMu.Unlock()
}

// unknownToken is the refusal of a value that no token has (revoked and expired tokens
// are refused as such).
const unknownToken = "unknown token: no token has this value (check that it was copied whole, or create one)"

// tokenPrincipal is the principal of a live token, by its hash.
func (s *Service) tokenPrincipal(ctx context.Context, hash []byte) (*auth.Principal, time.Time, error) {
	tok, now, err := s.liveToken(ctx, hash)
	if err != nil {
		return nil, now, err
	}
	p := &auth.Principal{Kind: auth.KindToken, ProjectID: tok.ProjectID, Name: tok.Name,
		TokenID: tok.ID, TokenType: tok.Type, Scopes: tok.Scopes, TokenHash: hash}
	if tok.CreatedBy != nil {
		p.TokenMaker = tok.CreatedBy.ID
	}
	return p, now, nil
}

// liveToken finds the token of a hash, if it is neither revoked nor expired.
func (s *Service) liveToken(ctx context.Context, hash []byte) (*model.Token, time.Time, error) {
	tok, err := s.store.TokenByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, time.Time{}, errs.Unauth(unknownToken)
	}
	if err != nil {
		return nil, time.Time{}, internal("look up token", err)
	}
	now := s.clock()
	if tok.RevokedAt != nil {
		return nil, now, errs.Unauth("this token was revoked")
	}
	if tok.ExpiresAt != nil && !now.Before(*tok.ExpiresAt) {
		return nil, now, errs.Unauth("this token expired at %s", tok.ExpiresAt.Format(time.RFC3339))
	}
	return tok, now, nil
}

// CheckCredentials tells whether the credential p authenticated with still holds, by
// the same checks as authenticating: a revoked (or rotated) or expired token, a deleted
// agent or a replaced project secret gives an errs.Unauthenticated error saying which.
// Long-lived connections (the event stream, GraphQL over WebSocket) ask it before
// sending and every fraction of a second, and close when it fails (one indexed read of
// the database per distinct credential each time).
func (s *Service) CheckCredentials(ctx context.Context, p *auth.Principal) error {
	var now *auth.Principal
	var err error
	switch p.Kind { // the lookups of Authenticate, with what p authenticated with
	case auth.KindToken:
		if p.SessionHash != nil { // a token's browser session: signed out, or its token ended
			now, err = s.tokenSessionPrincipal(ctx, p.SessionHash)
			break
		}
		now, _, err = s.tokenPrincipal(ctx, p.TokenHash)
	case auth.KindAgent:
		now, err = s.agentPrincipal(ctx, p.ProjectID, p.AgentDigest, p.Name)
	case auth.KindUser:
		return s.checkSession(ctx, p)
	default:
		return nil // the local owner and jobs hold no credential that could end
	}
	if err != nil {
		return err
	}
	if now.TokenID != p.TokenID {
		return errs.Unauth(unknownToken)
	}
	if now.AgentID != p.AgentID { // deleted, and another registered under its name
		return errs.Unauth("agent %q was deleted", p.Name)
	}
	return nil
}

// FlushTokenUse writes the last-use times gathered since the previous flush, of tokens
// and of agents (presence.go). Writing them in the background (backend/jobs) keeps a
// read request from costing a write.
func (s *Service) FlushTokenUse(ctx context.Context) error {
	if err := s.flushAgentsSeen(ctx); err != nil {
		return err
	}
	s.usedMu.Lock()
	used := s.used
	s.used = map[int64]time.Time{}
	s.usedMu.Unlock()
	if len(used) == 0 {
		return nil
	}
	err := s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error { return tx.TouchTokens(ctx, used) })
	if err != nil {
		// Not written (a full disk, say): kept for the next flush, unless a later use
		// has come meanwhile.
		s.usedMu.Lock()
		for id, at := range used {
			if later, ok := s.used[id]; !ok || later.Before(at) {
				s.used[id] = at
			}
		}
		s.usedMu.Unlock()
	}
	return err
}

// Tokens lists the project's tokens, without values, with up-to-date last use.
func (s *Service) Tokens(ctx context.Context, p *auth.Principal) ([]model.Token, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	toks, err := s.store.Read().Tokens(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("list tokens", err)
	}
	s.usedMu.Lock()
	for i := range toks {
		if at, ok := s.used[toks[i].ID]; ok {
			toks[i].LastUsedAt = &at
		}
	}
	s.usedMu.Unlock()
	return toks, nil
}

// RevokeToken revokes a token of the principal's project; it stops working at once.
func (s *Service) RevokeToken(ctx context.Context, p *auth.Principal, id int64) error {
	if err := require(p, auth.Admin); err != nil {
		return err
	}
	now := s.clock()
	return s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		err := tx.RevokeToken(ctx, p.ProjectID, id, now)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Missing("token %d not found", id)
		}
		if err != nil {
			return err
		}
		return tx.AppendEvent(ctx, p.ProjectID, EventTokenRevoked, map[string]int64{"id": id}, now)
	})
}

// agentPrincipal checks an agent's headers (the agent case of Authenticate), in the spec's order: the digest must be
// the SHA-1 of projectID followed by the project's secret (compared in constant time),
// then agentName must be an agent registered in that project. The namespace plays no
// part. Each failure says which header was wrong, never the expected value.
func (s *Service) agentPrincipal(ctx context.Context, projectID, digest, agentName string) (*auth.Principal, error) {
	if projectID == "" {
		return nil, errs.Unauth("X-Task-Authorization needs a project: use a /api/projects/{projectId}/... path or a project_id in the body")
	}
	creds, err := s.store.Read().AgentCredentials(ctx, projectID, agentName)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return nil, internal("load project", err)
	}
	// An unknown project is compared against a throwaway secret, so that the answer and
	// its timing are the same as for a wrong digest.
	secret := "unknown project"
	if creds != nil {
		secret = creds.Secret
	}
	if !auth.DigestMatches(digest, auth.AgentDigest(projectID, secret)) || creds == nil {
		return nil, errs.Unauth("X-Task-Authorization is wrong: it must be the hex SHA-1 of the project id followed by the project's token secret (the project id, not the namespace)")
	}
	if agentName == "" {
		return nil, errs.Unauth("missing X-Agent-Name: send the agent's name (AGENT_NAME)")
	}
	agent := creds.Agent
	if agent == nil {
		return nil, errs.Unauth("X-Agent-Name %q is not an agent registered in this project", agentName)
	}
	p := auth.Agent(projectID, agent.ID, agent.Name)
	p.AgentDigest = digest
	// Every authentication of an agent is a contact, and so is each check of its open
	// event stream (CheckCredentials): the agent is there.
	s.agentSeen(agent.ID, s.clock())
	return p, nil
}
