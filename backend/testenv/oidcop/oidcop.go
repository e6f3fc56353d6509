// Package oidcop runs a real OpenID Provider for tests: zitadel/oidc's op package with
// its example storage and login page (discovery, JWKS, RS256-signed ID tokens, PKCE,
// end_session). The Go tests start it in process; the browser tests start it as a
// command (cmd/oidcop). It is test tooling and never part of the agentdesk binary.
//
// By default it behaves as zitadel does: the ID token carries no email (the client
// asks userinfo for it), and email_verified is left out whenever it is false.
// Options.EmailInIDToken puts the email in the ID token, as most providers do, and
// Options.RequireIDTokenHint makes end_session refuse a post_logout_redirect_uri
// without an id_token_hint, as Ory Hydra does.
package oidcop

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-jose/go-jose/v4"
	"github.com/zitadel/oidc/v3/example/server/exampleop"
	"github.com/zitadel/oidc/v3/example/server/storage"
	"github.com/zitadel/oidc/v3/pkg/op"
)

// User is an account at the provider; people sign in with Username and Password on
// the provider's own login page.
type User struct {
	ID                 string // the subject; default the username
	Username, Password string
	Email              string
	EmailUnverified    bool   // email_verified is false (and so left out of every answer)
	Name               string // "Dana Scott": given name, then family name
}

// Options configure the provider: one confidential web client and its users.
type Options struct {
	Addr         string // where to listen; default 127.0.0.1:0
	ClientID     string
	ClientSecret string
	// RedirectURIs are the client's registered redirect URIs (…/auth/callback).
	RedirectURIs []string
	// PostLogoutRedirectURIs may follow end_session; default each redirect URI's
	// origin with path "/".
	PostLogoutRedirectURIs []string
	Users                  []User
	// EmailInIDToken asserts the email and profile claims in the ID token too (zitadel
	// gives them only through userinfo when it issues an access token).
	EmailInIDToken bool
	// RequireIDTokenHint refuses end_session with a post_logout_redirect_uri but no
	// id_token_hint (Hydra: "post_logout_redirect_uri is set but id_token_hint is
	// missing"); an id_token_hint is verified either way.
	RequireIDTokenHint bool
}

// Provider is a running provider.
type Provider struct {
	Issuer string // http://host:port
	// WrongKey makes the JWKS publish another key under the signing key's id, so that
	// ID tokens no longer verify.
	WrongKey atomic.Bool
	users    *userStore
	srv      *http.Server
}

// Start listens and serves the provider until Close.
func Start(o Options) (*Provider, error) {
	if o.ClientID == "" {
		return nil, errors.New("oidcop: a client id is needed")
	}
	if o.Addr == "" {
		o.Addr = "127.0.0.1:0"
	}
	if o.PostLogoutRedirectURIs == nil {
		for _, r := range o.RedirectURIs {
			if i := strings.Index(r, "://"); i >= 0 {
				if j := strings.IndexByte(r[i+3:], '/'); j >= 0 {
					r = r[:i+3+j]
				}
			}
			o.PostLogoutRedirectURIs = append(o.PostLogoutRedirectURIs, r+"/")
		}
	}
	users := &userStore{byID: map[string]*storage.User{}}
	for _, u := range o.Users {
		if u.ID == "" {
			u.ID = u.Username
		}
		first, last, _ := strings.Cut(u.Name, " ")
		users.byID[u.ID] = &storage.User{ID: u.ID, Username: u.Username, Password: u.Password, FirstName: first, LastName: last,
			Email: u.Email, EmailVerified: !u.EmailUnverified}
	}
	clients := map[string]*storage.Client{o.ClientID: storage.WebClient(o.ClientID, o.ClientSecret, o.RedirectURIs...)}
	p := &Provider{users: users}
	st := &opStorage{Storage: storage.NewStorageWithClients(users, clients), wrongKey: &p.WrongKey,
		postLogout: o.PostLogoutRedirectURIs, emailInIDToken: o.EmailInIDToken}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	p.Issuer = "http://" + ln.Addr().String()
	var handler http.Handler = exampleop.SetupServer(p.Issuer, st, nil, false)
	if o.RequireIDTokenHint {
		handler = requireIDTokenHint(handler)
	}
	p.srv = &http.Server{Handler: handler, ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the provider.
func (p *Provider) Close() { _ = p.srv.Close() }

// SetEmail changes the email of the account with this id, as its owner would in the
// provider's settings.
func (p *Provider) SetEmail(id, email string, verified bool) {
	p.users.mu.Lock()
	defer p.users.mu.Unlock()
	u := *p.users.byID[id]
	u.Email, u.EmailVerified = email, verified
	p.users.byID[id] = &u
}

// requireIDTokenHint answers end_session as Hydra does when a post_logout_redirect_uri
// comes without an id_token_hint.
func requireIDTokenHint(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/end_session" && r.FormValue("post_logout_redirect_uri") != "" && r.FormValue("id_token_hint") == "" {
			http.Error(w, "The request is missing a required parameter: post_logout_redirect_uri is set but id_token_hint is missing", http.StatusBadRequest)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// userStore holds the provider's accounts (the example's UserStore). An account is
// replaced, never changed in place, so the *storage.User handed out stays as it was.
type userStore struct {
	mu   sync.Mutex
	byID map[string]*storage.User
}

func (u *userStore) GetUserByID(id string) *storage.User {
	u.mu.Lock()
	defer u.mu.Unlock()
	return u.byID[id]
}

func (u *userStore) GetUserByUsername(name string) *storage.User {
	u.mu.Lock()
	defer u.mu.Unlock()
	for _, x := range u.byID {
		if x.Username == name {
			return x
		}
	}
	return nil
}

func (u *userStore) ExampleClientID() string { return "service" }

// opStorage is the example storage with three changes: the client accepts our
// post-logout redirect URIs (the example's clients accept none), may have the email in
// its ID tokens, and the JWKS may publish a wrong key.
type opStorage struct {
	*storage.Storage
	wrongKey       *atomic.Bool
	postLogout     []string
	emailInIDToken bool
}

type client struct {
	op.Client
	postLogout     []string
	emailInIDToken bool
}

func (c client) PostLogoutRedirectURIs() []string     { return c.postLogout }
func (c client) IDTokenUserinfoClaimsAssertion() bool { return c.emailInIDToken }

func (s *opStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{Client: c, postLogout: s.postLogout, emailInIDToken: s.emailInIDToken}, nil
}

type pubKey struct {
	id  string
	key *rsa.PublicKey
}

func (k pubKey) ID() string                         { return k.id }
func (k pubKey) Algorithm() jose.SignatureAlgorithm { return jose.RS256 }
func (k pubKey) Use() string                        { return "sig" }
func (k pubKey) Key() any                           { return k.key }

func (s *opStorage) KeySet(ctx context.Context) ([]op.Key, error) {
	if !s.wrongKey.Load() {
		return s.Storage.KeySet(ctx)
	}
	signing, err := s.SigningKey(ctx)
	if err != nil {
		return nil, err
	}
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return nil, err
	}
	return []op.Key{pubKey{id: signing.ID(), key: &other.PublicKey}}, nil // same kid, other key
}
