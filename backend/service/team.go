package service

import (
	"context"
	"crypto/subtle"
	"errors"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Team mode (issue 18): people sign in with OpenID Connect (backend/api/team.go runs the
// protocol with go-oidc) and get a server-side session, kept by its hash. The rules of
// who may sign in, what a session may do and when it ends are here.

// Session lifetimes: a session not used for SessionIdle ends, and none outlives
// SessionMaxAge. A login under way (between /login and the callback) lasts LoginMaxAge.
const (
	SessionIdle   = 7 * 24 * time.Hour
	SessionMaxAge = 30 * 24 * time.Hour
	LoginMaxAge   = 10 * time.Minute
	// touchEvery bounds how often a session's last use is written: not on every request.
	touchEvery = time.Minute
)

// OIDC is the team mode configuration the service runs with.
func (s *Service) OIDC() auth.OIDC { return s.oidc }

// Now is the service's clock, for the ID token checks of the sign-in.
func (s *Service) Now() time.Time { return s.clock() }

// PruneSessions forgets the sessions that can no longer be used (signed out at least
// endedSessionKept ago, or past SessionIdle or SessionMaxAge); backend/jobs runs it
// hourly. A forgotten session's cookie is refused like an expired one.
func (s *Service) PruneSessions(ctx context.Context) error {
	now := s.clock()
	return s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		_, err := tx.PruneSessions(ctx, now.Add(-endedSessionKept), now.Add(-SessionIdle), now.Add(-SessionMaxAge))
		return err
	})
}

// endedSessionKept is how long a signed-out session is kept before pruning forgets it:
// long enough for the streams still open on it to be told "signed out" at their next
// check (events.Hub: within a second), rather than "unknown session".
const endedSessionKept = time.Minute

// MaxPendingLogins bounds the logins under way (begun at /login in the last
// LoginMaxAge, not yet back at the callback), whoever began them.
const MaxPendingLogins = 10_000

// BeginLogin stores a login under way from the client address addr: its state, nonce
// and PKCE verifier, for the callback to take once. It is refused (rate_limited) past
// LoginLimit a LoginWindow from addr, and while MaxPendingLogins are under way.
func (s *Service) BeginLogin(ctx context.Context, addr, state, nonce, verifier string) error {
	now := s.clock()
	if err := s.logins.admit(addr, now); err != nil {
		return err
	}
	s.logins.count(addr, now)
	return s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		if err := tx.PruneLogins(ctx, now.Add(-LoginMaxAge)); err != nil {
			return internal("forget old logins", err)
		}
		n, oldest, err := tx.PendingLogins(ctx)
		if err != nil {
			return internal("count logins", err)
		}
		if n >= MaxPendingLogins {
			wait := oldest.Add(LoginMaxAge).Sub(now)
			return errs.Limited(wait, "%d sign-ins are under way on this server, the most it takes at once; try again in %d seconds",
				MaxPendingLogins, max(1, int((wait+time.Second-1)/time.Second)))
		}
		if err := tx.InsertLogin(ctx, state, nonce, verifier, now); err != nil {
			return internal("store the login", err)
		}
		return nil
	})
}

// TakeLogin returns the nonce and PKCE verifier of the login with this state and
// forgets it: a state (and so its code) is good once, for LoginMaxAge.
func (s *Service) TakeLogin(ctx context.Context, state string) (nonce, verifier string, err error) {
	var at time.Time
	err = s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		var err error
		nonce, verifier, at, err = tx.TakeLogin(ctx, state)
		if errors.Is(err, store.ErrNotFound) {
			return errs.Unauth("this sign-in link is unknown or was already used; sign in again at /login")
		}
		if err != nil {
			return internal("take the login", err)
		}
		return nil
	})
	if err != nil {
		return "", "", err
	}
	if s.clock().Sub(at) > LoginMaxAge {
		return "", "", errs.Unauth("this sign-in took longer than %s; sign in again at /login", LoginMaxAge)
	}
	return nonce, verifier, nil
}

// Identity is who the provider says signed in, from a verified ID token.
type Identity struct {
	Issuer, Subject string
	Email           string // lowercased; "" when the provider gave none
	EmailVerified   bool   // the provider said email_verified: true for Email
	Name            string
	// Where the sign-in came from, recorded with the session for its owner's list:
	// the browser's User-Agent (cut to MaxUserAgentLen) and the client address.
	UserAgent, Address string
	// IDToken is the provider's raw ID token, kept with the session to send back as
	// id_token_hint at sign-out (EndSession). It is no credential here: a session is
	// its cookie.
	IDToken string
}

// MaxUserAgentLen bounds the User-Agent kept with a session, in characters.
const MaxUserAgentLen = 200

// SignIn finds or makes the person of a verified identity and starts a session for
// them; it returns the session cookie's value (never stored: the database keeps its
// hash). A person is known by (issuer, subject); on first sign-in, a user invited by
// email is linked to them, and otherwise someone whose email domain is allowed joins the
// default project as a member. Anyone else is refused (forbidden).
//
// Only a verified email (email_verified: true, or any with --oidc-trust-email) is used:
// to match an invitation or an allowed domain, and to replace a known person's email.
// An unverified one is ignored, so a person who changes their email at the provider to
// someone else's claims no invitation made later for that address.
func (s *Service) SignIn(ctx context.Context, id Identity) (string, error) {
	if id.Issuer == "" || id.Subject == "" {
		return "", errs.Unauth("the ID token names no issuer or subject")
	}
	id.Email = strings.ToLower(strings.TrimSpace(id.Email))
	verified := id.Email != "" && (id.EmailVerified || s.oidc.TrustEmail)
	var email *string
	if verified {
		email = &id.Email
	}
	name := strings.TrimSpace(id.Name)
	if name == "" && id.Email != "" {
		name = id.Email[:max(0, strings.IndexByte(id.Email, '@'))]
	}
	if name == "" {
		name = id.Subject
	}
	name = truncate(name, MaxUserNameLen)
	value := auth.NewSessionValue()
	now := s.clock()
	err := s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		userID, err := tx.UserByOIDC(ctx, id.Issuer, id.Subject)
		switch {
		case err == nil: // known: refresh email and name (unless the email is another user's)
			if email != nil {
				if other, err := tx.UserByEmail(ctx, *email); err == nil && other != userID {
					email = nil
				}
			}
			if email == nil {
				p, err := tx.Person(ctx, userID)
				if err != nil {
					return internal("load user", err)
				}
				if p.Email != "" {
					email = &p.Email
				}
			}
		case errors.Is(err, store.ErrNotFound):
			userID, err = s.firstSignIn(ctx, tx, id, email, name, now)
			if err != nil {
				return err
			}
		default:
			return internal("find user", err)
		}
		if err := tx.LinkUser(ctx, userID, id.Issuer, id.Subject, name, email); err != nil {
			return internal("update user", err)
		}
		ms, err := tx.Memberships(ctx, userID)
		if err != nil {
			return internal("list memberships", err)
		}
		if len(ms) == 0 {
			return errs.Forbid("%s is not a member of any project here; ask an owner to add you", who(id))
		}
		agent := []rune(strings.ToValidUTF8(id.UserAgent, ""))
		agent = agent[:min(len(agent), MaxUserAgentLen)]
		if err := tx.InsertSession(ctx, auth.HashToken(value), userID, auth.RandomString(43), string(agent), id.Address, id.IDToken, now); err != nil {
			return internal("create session", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return value, nil
}

func who(id Identity) string {
	if id.Email != "" {
		return id.Email
	}
	return "this account"
}

// firstSignIn links an invited user (by verified email) or makes an allowed-domain
// person a member of the default project.
func (s *Service) firstSignIn(ctx context.Context, tx *store.Tx, id Identity, email *string, name string, now time.Time) (int64, error) {
	if email == nil {
		return 0, errs.Forbid("the provider gave no verified email for this account, so it matches no invitation; ask an owner to add you by email")
	}
	userID, err := tx.UserByEmail(ctx, *email)
	if err == nil {
		p, err := tx.Person(ctx, userID)
		if err != nil {
			return 0, internal("load user", err)
		}
		if p.Issuer != "" { // the invitation was taken by another account already
			return 0, errs.Forbid("%s already signs in with another account", *email)
		}
		return userID, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return 0, internal("find user", err)
	}
	domain := (*email)[strings.LastIndexByte(*email, '@')+1:]
	if !slices.Contains(s.oidc.AllowedDomains, domain) {
		return 0, errs.Forbid("%s is not invited to this agentdesk; ask an owner to add you", *email)
	}
	projects, err := tx.Projects(ctx)
	if err != nil {
		return 0, internal("list projects", err)
	}
	if len(projects) == 0 {
		return 0, errs.Missing("no project yet")
	}
	if userID, err = tx.InsertUser(ctx, name, email, now); err != nil {
		return 0, internal("create user", err)
	}
	project := projects[0].ID // the default project (Personal, made on first start)
	if err := tx.InsertMember(ctx, project, userID, model.RoleMember, now); err != nil {
		return 0, internal("add member", err)
	}
	m, err := s.loadMember(ctx, tx.Reader, project, userID)
	if err != nil {
		return 0, err
	}
	return userID, tx.AppendEvent(ctx, project, EventMemberAdded, m, now)
}

// truncate cuts s to at most n bytes, dropping a character cut in two.
func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return strings.ToValidUTF8(s[:n], "")
}

// errUnknownSession refuses a cookie no session has (signed out and pruned, or never).
var errUnknownSession = errs.Unauth("unknown session; sign in again")

// sessionPrincipal is the principal of a live session cookie value: a person's, acting
// in projectID (or, if "", their first project), when team mode is on; else, or if no
// person has it, a token's (tokensession.go).
func (s *Service) sessionPrincipal(ctx context.Context, value, projectID string) (*auth.Principal, error) {
	if len(value) != 43 || strings.Trim(value, "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz") != "" {
		return nil, errs.Unauth("the session cookie is not valid; sign in again")
	}
	hash := auth.HashToken(value)
	if !s.oidc.Enabled() {
		return s.tokenSessionPrincipal(ctx, hash)
	}
	p, sess, err := s.liveSession(ctx, hash, projectID)
	if errors.Is(err, errUnknownSession) {
		return s.tokenSessionPrincipal(ctx, hash)
	}
	if err != nil {
		return nil, err
	}
	if now := s.clock(); now.Sub(sess.LastSeenAt) >= touchEvery {
		err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error { return tx.TouchSession(ctx, sess.ID, now) })
		if err != nil && !store.IsDiskFull(err) { // on a full disk, reads go on untouched
			return nil, internal("record session use", err)
		}
	}
	return p, nil
}

// liveSession checks the session of a hash and the person's membership of projectID.
func (s *Service) liveSession(ctx context.Context, hash []byte, projectID string) (*auth.Principal, *store.Session, error) {
	r := s.store.Read()
	sess, err := r.SessionByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errUnknownSession
	}
	if err != nil {
		return nil, nil, internal("look up session", err)
	}
	if err := sessionEnded(sess.EndedAt, sess.CreatedAt, sess.LastSeenAt, s.clock()); err != nil {
		return nil, nil, err
	}
	person, err := r.Person(ctx, sess.UserID)
	if err != nil {
		return nil, nil, internal("load user", err)
	}
	ms, err := r.Memberships(ctx, sess.UserID)
	if err != nil {
		return nil, nil, internal("list memberships", err)
	}
	if len(ms) == 0 {
		return nil, nil, errs.Forbid("you are no longer a member of any project here; ask an owner to add you")
	}
	m := ms[0]
	if projectID != "" {
		i := slices.IndexFunc(ms, func(m store.Membership) bool { return m.ProjectID == projectID })
		if i < 0 {
			return nil, nil, errs.Forbid("you are not a member of project %q", projectID)
		}
		m = ms[i]
	}
	return &auth.Principal{Kind: auth.KindUser, ProjectID: m.ProjectID, Name: person.Name, UserID: person.ID,
		Role: m.Role, Scopes: RoleScopes(m.Role), SessionHash: hash, CSRFToken: sess.CSRFToken}, sess, nil
}

// sessionEnded says why a session that ended, or began at created and was last seen
// at seen, is no longer good at now; nil while it is.
func sessionEnded(ended *time.Time, created, seen, now time.Time) error {
	switch {
	case ended != nil:
		return errs.Unauth("this session was signed out; sign in again")
	case now.Sub(seen) >= SessionIdle:
		return errs.Unauth("this session expired after %s unused; sign in again", SessionIdle)
	case now.Sub(created) >= SessionMaxAge:
		return errs.Unauth("this session is %s old and expired; sign in again", SessionMaxAge)
	}
	return nil
}

// checkSession is CheckCredentials for a session: any failure (signed out, expired,
// member removed) ends the streams.
func (s *Service) checkSession(ctx context.Context, p *auth.Principal) error {
	now, _, err := s.liveSession(ctx, p.SessionHash, p.ProjectID)
	if err != nil {
		if errs.CodeOf(err) == errs.Forbidden {
			return errs.Unauth("%s", err.Error())
		}
		return err
	}
	if now.Role != p.Role {
		return errs.Unauth("your role in this project changed; reconnect")
	}
	return nil
}

// checkCookieRequest applies the rules of cookie-authenticated requests: GraphQL only
// as POST with a JSON body; a change (POST, PUT, PATCH, DELETE) only with the session's
// X-CSRF-Token and from the server's own origin. Bearer tokens never need this.
func (s *Service) checkCookieRequest(c Credentials, p *auth.Principal) error {
	if c.Where == WhereGraphQL { // (GraphQL over WebSocket reads no cookie at all)
		mt, _, _ := mime.ParseMediaType(c.ContentType)
		if c.Method != http.MethodPost || mt != "application/json" {
			return errs.Forbid("GraphQL with a session cookie takes POST with a JSON body only")
		}
	}
	switch c.Method {
	case http.MethodGet, http.MethodHead, http.MethodOptions, "":
		return nil
	}
	if c.CSRFToken == "" || subtle.ConstantTimeCompare([]byte(c.CSRFToken), []byte(p.CSRFToken)) != 1 {
		return errs.Forbid("a change made with a session cookie needs the session's X-CSRF-Token header (GET /api/me gives it)")
	}
	if !s.sameOrigin(c) {
		own := originOf(s.oidc.PublicURL)
		if own == "" {
			own = "this server"
		}
		return errs.Forbid("a change made with a session cookie must come from %s itself (Origin or Sec-Fetch-Site: same-origin)", own)
	}
	return nil
}

// sameOrigin tells whether a request comes from the server's own pages: its Origin is
// the public URL's, or, without a public URL, names the host the request was sent to
// (as net/http's CrossOriginProtection checks). Without an Origin, Sec-Fetch-Site says.
func (s *Service) sameOrigin(c Credentials) bool {
	switch {
	case c.Origin == "":
		return c.FetchSite == "same-origin"
	case c.Origin == "null":
		return false
	case s.oidc.PublicURL != "":
		return c.Origin == originOf(s.oidc.PublicURL)
	}
	u, err := url.Parse(c.Origin)
	return err == nil && u.Host != "" && strings.EqualFold(u.Host, c.Host)
}

// originOf is the scheme://host[:port] of a URL, as browsers send it in Origin.
func originOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return ""
	}
	return strings.ToLower(u.Scheme) + "://" + strings.ToLower(u.Host)
}

// EndSession signs the caller's session out: from then on its cookie is refused
// everywhere, open streams included. It returns the provider's ID token of the session
// ("" if it has none, as a token's session never has), for the provider's sign-out
// (id_token_hint).
func (s *Service) EndSession(ctx context.Context, p *auth.Principal) (idToken string, err error) {
	if p == nil || p.SessionHash == nil {
		return "", errs.Forbid("only a signed-in session can sign out; tokens are revoked instead")
	}
	if p.Kind == auth.KindToken {
		return "", s.endTokenSession(ctx, p, p.SessionHash)
	}
	sess, err := s.store.Read().SessionByHash(ctx, p.SessionHash)
	if err != nil {
		return "", internal("look up session", err)
	}
	err = s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if err := tx.EndSession(ctx, sess.ID, s.clock()); err != nil {
			return internal("end session", err)
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	return sess.IDToken, nil
}

// EndReplacedSession ends the session of a cookie value, if it is one (a person's or a
// token's): a browser that signs in again keeps only its new session.
func (s *Service) EndReplacedSession(ctx context.Context, value string) error {
	hash := auth.HashToken(value)
	sess, err := s.store.Read().SessionByHash(ctx, hash)
	if errors.Is(err, store.ErrNotFound) {
		return s.endTokenSession(ctx, nil, hash)
	}
	if err != nil {
		return internal("look up session", err)
	}
	return s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		if err := tx.EndSession(ctx, sess.ID, s.clock()); err != nil {
			return internal("end session", err)
		}
		return nil
	})
}

// Me describes the caller: GET /api/me.
type Me struct {
	Via         string             `json:"via"`
	User        *MeUser            `json:"user"`
	Project     MeProject          `json:"project"`
	Scopes      []string           `json:"scopes"`
	Memberships []store.Membership `json:"memberships"`
	CSRFToken   string             `json:"csrfToken,omitempty"`
}

// MeUser is the person behind a session or the local owner.
type MeUser struct {
	ID    int64  `json:"id"`
	Email string `json:"email"`
	Name  string `json:"name"`
}

// MeProject is the project the caller acts in.
type MeProject struct {
	ID   string `json:"id"`
	Name string `json:"name"`
}

// Me says who the caller is, how they came in, where they act and what they may do.
func (s *Service) Me(ctx context.Context, p *auth.Principal) (*Me, error) {
	if p == nil {
		return nil, errs.Unauth("authentication required")
	}
	r := s.store.Read()
	proj, err := s.project(ctx, r, p.ProjectID)
	if err != nil {
		return nil, err
	}
	out := &Me{Project: MeProject{ID: proj.ID, Name: proj.Name}, Scopes: slices.Sorted(slices.Values(p.Scopes)),
		Memberships: []store.Membership{}}
	switch {
	case p.Kind == auth.KindUser:
		out.Via, out.CSRFToken = "session", p.CSRFToken
		person, err := r.Person(ctx, p.UserID)
		if err != nil {
			return nil, internal("load user", err)
		}
		out.User = &MeUser{ID: person.ID, Email: person.Email, Name: person.Name}
		if out.Memberships, err = r.Memberships(ctx, p.UserID); err != nil {
			return nil, internal("list memberships", err)
		}
	case p.Kind == auth.KindAgent:
		out.Via = "agent"
	case p.Kind == auth.KindToken && p.SessionHash != nil:
		out.Via, out.CSRFToken = "token-session", p.CSRFToken
	case p.Kind == auth.KindToken && p.Name == DesktopSessionTokenName:
		out.Via = "desktop"
	default:
		out.Via = "token"
	}
	return out, nil
}

// ReadSession adds to c what a browser session presents on r: the session cookie (a
// person's in team mode, or a token's: always read), the project it acts in, and what
// the CSRF rules look at.
func (s *Service) ReadSession(c *Credentials, r *http.Request) {
	if ck, err := r.Cookie(s.oidc.SessionCookie()); err == nil {
		c.Session = ck.Value
	}
	c.Project = r.Header.Get("X-Agentdesk-Project")
	c.Method, c.ContentType = r.Method, r.Header.Get("Content-Type")
	c.CSRFToken, c.Origin, c.FetchSite = r.Header.Get("X-CSRF-Token"), r.Header.Get("Origin"), r.Header.Get("Sec-Fetch-Site")
	c.Host = r.Host
}

// SignInOptions says how people sign in here, for the sign-in page before it holds any
// credential (GET /api/signin). OIDC is nil unless team mode is on. Session says whether
// the request came with a session cookie (live or not): the page asks GET /api/me only
// then, so that a visitor with no credential costs no refused request.
type SignInOptions struct {
	OIDC    *SignInOIDC `json:"oidc"`
	Session bool        `json:"session"`
}

// SignInOIDC is the "Sign in with <Name>" button: it goes to LoginURL.
type SignInOIDC struct {
	Name     string `json:"name"`
	LoginURL string `json:"loginUrl"`
}

// SignInOptions: the provider's name is --oidc-provider-name, by default the issuer's host.
// hasSessionCookie says whether the request carries the session cookie.
func (s *Service) SignInOptions(hasSessionCookie bool) SignInOptions {
	if !s.oidc.Enabled() {
		return SignInOptions{Session: hasSessionCookie}
	}
	name := s.oidc.ProviderName
	if name == "" {
		if u, err := url.Parse(s.oidc.Issuer); err == nil && u.Hostname() != "" {
			name = u.Hostname()
		} else {
			name = s.oidc.Issuer
		}
	}
	return SignInOptions{OIDC: &SignInOIDC{Name: name, LoginURL: "/login"}, Session: hasSessionCookie}
}
