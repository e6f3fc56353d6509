package api

import (
	"context"
	"errors"
	"fmt"
	"html"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/coreos/go-oidc/v3/oidc"
	"github.com/gin-gonic/gin"
	"golang.org/x/oauth2"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

// Team mode's sign-in (issue 18): GET /login sends the browser to the OpenID Connect
// provider (authorization code flow with PKCE S256, state and nonce); GET /auth/callback
// checks what comes back with go-oidc and oauth2 (the ID token's signature against the
// provider's JWKS, issuer, audience, expiry and nonce; the state, and so the code, once)
// and starts a session; POST /logout ends it. Who may sign in, and what a session may
// do, is the service's (service/team.go).

// teamHandler holds the provider, found by discovery on first use (and again after a
// failure), so that a provider down at start does not stop the server.
type teamHandler struct {
	svc *service.Service
	cfg auth.OIDC

	mu         sync.Mutex
	provider   *oidc.Provider
	endSession string // the provider's end_session_endpoint, "" if it has none
}

func newTeamHandler(svc *service.Service) *teamHandler {
	return &teamHandler{svc: svc, cfg: svc.OIDC()}
}

func (h *teamHandler) discover(ctx context.Context) (*oidc.Provider, error) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.provider != nil {
		return h.provider, nil
	}
	p, err := oidc.NewProvider(ctx, h.cfg.Issuer)
	if err != nil {
		slog.Warn("OpenID Connect discovery", "issuer", h.cfg.Issuer, "err", err)
		return nil, errs.Unavailable("the sign-in provider %s does not answer; try again later", h.cfg.Issuer)
	}
	var extra struct {
		EndSession string `json:"end_session_endpoint"`
	}
	_ = p.Claims(&extra) // optional
	h.provider, h.endSession = p, extra.EndSession
	return p, nil
}

func (h *teamHandler) oauth2Config(p *oidc.Provider) *oauth2.Config {
	return &oauth2.Config{ClientID: h.cfg.ClientID, ClientSecret: h.cfg.ClientSecret, Endpoint: p.Endpoint(),
		RedirectURL: h.cfg.PublicURL + "/auth/callback", Scopes: h.cfg.Scopes}
}

// login serves GET /login.
func (h *teamHandler) login(c *gin.Context) {
	p, err := h.discover(c.Request.Context())
	if err != nil {
		signInFailed(c, err)
		return
	}
	state, nonce, verifier := auth.RandomString(43), auth.RandomString(43), oauth2.GenerateVerifier()
	if err := h.svc.BeginLogin(c.Request.Context(), service.ClientAddress(c.Request.Context()), state, nonce, verifier); err != nil {
		signInFailed(c, err)
		return
	}
	// The state goes in a cookie too, so that only the browser that began the sign-in
	// can finish it: a callback link made by someone else signs nobody in as them.
	http.SetCookie(c.Writer, h.loginCookie(state, int(service.LoginMaxAge.Seconds())))
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusFound, h.oauth2Config(p).AuthCodeURL(state, oidc.Nonce(nonce), oauth2.S256ChallengeOption(verifier)))
}

// callback serves GET /auth/callback.
func (h *teamHandler) callback(c *gin.Context) {
	ctx := c.Request.Context()
	q := c.Request.URL.Query()
	addr := service.ClientAddress(ctx)
	// Only a provider answer that fails verification counts against the address's
	// limit of failures (ratelimit.go). The checks before it count nothing: any page
	// can make a browser send a callback without its login cookie, or with ?error=.
	unverified := func(err error) { signInFailed(c, h.svc.SignInRefused(addr, err)) }
	if e := q.Get("error"); e != "" {
		// The state is spent either way: the provider said no.
		_, _, _ = h.svc.TakeLogin(ctx, q.Get("state"))
		signInFailed(c, errs.Unauth("the sign-in provider refused: %s %s", e, q.Get("error_description")))
		return
	}
	nonce, verifier, err := h.svc.TakeLogin(ctx, q.Get("state"))
	if err != nil {
		signInFailed(c, err)
		return
	}
	http.SetCookie(c.Writer, h.loginCookie("", -1))
	if ck, err := c.Request.Cookie(h.loginCookie("", 0).Name); err != nil || ck.Value != q.Get("state") {
		signInFailed(c, errs.Unauth("this sign-in was begun in another browser (or its cookie was lost); sign in again at /login"))
		return
	}
	p, err := h.discover(ctx)
	if err != nil {
		signInFailed(c, err)
		return
	}
	tok, err := h.oauth2Config(p).Exchange(ctx, q.Get("code"), oauth2.VerifierOption(verifier))
	var refused *oauth2.RetrieveError
	switch {
	case errors.As(err, &refused):
		slog.Warn("sign-in: code exchange", "err", err)
		unverified(errs.Unauth("the sign-in provider did not accept the sign-in code (used already, or expired); sign in again at /login"))
		return
	case err != nil:
		slog.Warn("sign-in: code exchange", "err", err)
		signInFailed(c, errs.Unavailable("the sign-in provider %s does not answer; try again later", h.cfg.Issuer))
		return
	}
	raw, _ := tok.Extra("id_token").(string)
	if raw == "" {
		signInFailed(c, errs.Unauth("the sign-in provider sent no ID token; is the openid scope asked for?"))
		return
	}
	idt, err := p.Verifier(&oidc.Config{ClientID: h.cfg.ClientID, Now: h.svc.Now}).Verify(ctx, raw)
	if err != nil {
		slog.Warn("sign-in: ID token refused", "err", err)
		unverified(errs.Unauth("the ID token is not valid (%s); sign in again at /login", idTokenProblem(err)))
		return
	}
	if idt.Nonce != nonce {
		unverified(errs.Unauth("the ID token was not issued for this sign-in (nonce mismatch); sign in again at /login"))
		return
	}
	id, err := identity(ctx, p, idt, tok)
	if err != nil {
		signInFailed(c, err)
		return
	}
	id.UserAgent, id.Address, id.IDToken = c.Request.UserAgent(), addr, raw
	value, err := h.svc.SignIn(ctx, id)
	if err != nil {
		signInFailed(c, err)
		return
	}
	if old, err := c.Request.Cookie(h.cfg.SessionCookie()); err == nil {
		if err := h.svc.EndReplacedSession(ctx, old.Value); err != nil {
			slog.Warn("sign-in: end the replaced session", "err", err)
		}
	}
	http.SetCookie(c.Writer, h.cookie(value, int(service.SessionMaxAge.Seconds())))
	c.Header("Cache-Control", "no-store")
	c.Redirect(http.StatusFound, "/")
}

// idTokenProblem names what is wrong with an ID token, without its content.
func idTokenProblem(err error) string {
	var expired *oidc.TokenExpiredError
	switch {
	case errors.As(err, &expired):
		return "it expired"
	case strings.Contains(err.Error(), "signature"):
		return "its signature does not match the provider's keys"
	case strings.Contains(err.Error(), "issuer"):
		return "another issuer made it"
	case strings.Contains(err.Error(), "audience"):
		return "it is for another client"
	}
	return "it failed verification"
}

// identity reads who signed in from the ID token's claims, asking the provider's
// userinfo endpoint for the email and name when the token does not carry an email (as
// zitadel does). The email and whether it is verified come from the same place; a
// missing email_verified is false.
func identity(ctx context.Context, p *oidc.Provider, idt *oidc.IDToken, tok *oauth2.Token) (service.Identity, error) {
	var claims struct {
		Email         string `json:"email"`
		EmailVerified bool   `json:"email_verified"`
		Name          string `json:"name"`
		Username      string `json:"preferred_username"`
	}
	if err := idt.Claims(&claims); err != nil {
		return service.Identity{}, errs.Unauth("the ID token's claims cannot be read")
	}
	if claims.Email == "" {
		ui, err := p.UserInfo(ctx, oauth2.StaticTokenSource(tok))
		if err == nil && ui.Subject == idt.Subject {
			_ = ui.Claims(&claims)
		}
	}
	if claims.Name == "" {
		claims.Name = claims.Username
	}
	return service.Identity{Issuer: idt.Issuer, Subject: idt.Subject, Email: claims.Email,
		EmailVerified: claims.EmailVerified, Name: claims.Name}, nil
}

// cookie is the session cookie as the contract says: HttpOnly, SameSite=Lax, Path=/,
// Secure (and __Host-) when the public URL is https. maxAge < 0 deletes it.
func (h *teamHandler) cookie(value string, maxAge int) *http.Cookie {
	return &http.Cookie{Name: h.cfg.SessionCookie(), Value: value, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: h.cfg.Secure(), SameSite: http.SameSiteLaxMode}
}

// loginCookie holds the state of the browser's sign-in under way.
func (h *teamHandler) loginCookie(state string, maxAge int) *http.Cookie {
	name := "agentdesk_login"
	if h.cfg.Secure() {
		name = "__Host-" + name
	}
	return &http.Cookie{Name: name, Value: state, Path: "/", MaxAge: maxAge,
		HttpOnly: true, Secure: h.cfg.Secure(), SameSite: http.SameSiteLaxMode}
}

// logout serves POST /logout (authenticated, so with the CSRF rules): it ends the
// session, clears the cookie, and sends the browser to / or, for a person's session,
// to the provider's end_session_endpoint when it has one, with the session's ID token
// as id_token_hint (Hydra, for one, refuses to send the browser back without it, and
// then keeps its own session). A caller asking for JSON gets {"redirect": URL}
// instead of a 303, for a script to follow.
func (h *teamHandler) logout(c *gin.Context) error {
	p := principal(c)
	idToken, err := h.svc.EndSession(c.Request.Context(), p)
	if err != nil {
		return err
	}
	http.SetCookie(c.Writer, h.cookie("", -1))
	to := "/"
	// Only a person's session signs out at the provider too: a token's never went there.
	if p.Kind == auth.KindUser {
		if _, err := h.discover(c.Request.Context()); err == nil && h.endSession != "" {
			q := url.Values{"client_id": {h.cfg.ClientID}, "post_logout_redirect_uri": {h.cfg.PublicURL + "/"}}
			if idToken != "" {
				q.Set("id_token_hint", idToken)
			}
			to = h.endSession + "?" + q.Encode()
		}
	}
	c.Header("Cache-Control", "no-store")
	if strings.Contains(c.GetHeader("Accept"), "application/json") {
		c.JSON(http.StatusOK, gin.H{"redirect": to})
		return nil
	}
	c.Redirect(http.StatusSeeOther, to)
	return nil
}

// signInFailed answers a browser's failed sign-in with a short page that says why,
// and logs why: the request's own log line has only the status, and the
// troubleshooting table (docs/team.md) starts from these messages.
func signInFailed(c *gin.Context, err error) {
	code, msg := errs.Public(err)
	if code == errs.Internal {
		slog.Error("sign-in", "err", err)
	} else {
		slog.Warn("sign-in refused", "status", errs.HTTPStatus(err), "reason", msg,
			"address", service.ClientAddress(c.Request.Context()))
	}
	c.Header("Cache-Control", "no-store")
	if secs, ok := errs.RetryAfterSeconds(err); ok {
		c.Header("Retry-After", strconv.Itoa(secs))
	}
	c.Data(errs.HTTPStatus(err), "text/html; charset=utf-8", fmt.Appendf(nil, `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Sign-in failed - agentdesk</title>
<meta name="viewport" content="width=device-width, initial-scale=1"></head>
<body style="font-family: system-ui, sans-serif; max-width: 40rem; margin: 4rem auto; padding: 0 1rem">
<h1>Sign-in failed</h1><p role="alert">%s</p>
<p><a href="/login">Sign in again</a> · <a href="/">Back to the sign-in page</a></p></body></html>
`, html.EscapeString(msg)))
}

// me serves GET /api/me for any credential.
func me(svc *service.Service) gin.HandlerFunc {
	return handle(func(c *gin.Context) error {
		p := principal(c)
		m, err := svc.Me(c.Request.Context(), p)
		if err != nil {
			return err
		}
		c.Header("Cache-Control", "no-store")
		if p.Kind == auth.KindAgent { // an agent learns its own id, to assign itself tasks
			c.JSON(http.StatusOK, struct {
				*service.Me
				Agent meAgent `json:"agent"`
			}{m, meAgent{p.AgentID, p.Name}})
			return nil
		}
		c.JSON(http.StatusOK, m)
		return nil
	})
}

// meAgent is the agent an agent's /api/me names.
type meAgent struct {
	ID   int64  `json:"id"`
	Name string `json:"name"`
}

// signInOptions serves GET /api/signin, without a credential: what the sign-in page
// offers (the provider's button in team mode), and whether a session cookie came.
func signInOptions(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		_, err := c.Request.Cookie(svc.OIDC().SessionCookie())
		c.Header("Cache-Control", "no-store")
		c.JSON(http.StatusOK, svc.SignInOptions(err == nil))
	}
}

// requireAnyCredential authenticates GET /api/me: tokens, sessions, and agents, which
// name their project in X-Agentdesk-Project (there is none in the path).
func requireAnyCredential(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		creds := credentials(svc, c, service.WhereREST)
		if creds.AgentDigest != "" && creds.ProjectID == "" {
			creds.ProjectID = c.GetHeader("X-Agentdesk-Project")
		}
		p, err := svc.Authenticate(c.Request.Context(), creds)
		if err != nil {
			fail(c, err)
			return
		}
		c.Set(principalKey, p)
		c.Next()
	}
}
