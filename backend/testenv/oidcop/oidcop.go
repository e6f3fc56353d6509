// Package oidcop runs a real OpenID Provider for tests: zitadel/oidc's op package with
// its example storage and login page (discovery, JWKS, RS256-signed ID tokens, PKCE,
// end_session). The Go tests start it in process; the browser tests start it as a
// command (cmd/oidcop). It is test tooling and never part of the agentdesk binary.
package oidcop

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net"
	"net/http"
	"strings"
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
	EmailUnverified    bool   // email_verified is false
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
}

// Provider is a running provider.
type Provider struct {
	Issuer string // http://host:port
	// WrongKey makes the JWKS publish another key under the signing key's id, so that
	// ID tokens no longer verify.
	WrongKey atomic.Bool
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
	users := userStore{}
	for _, u := range o.Users {
		if u.ID == "" {
			u.ID = u.Username
		}
		first, last, _ := strings.Cut(u.Name, " ")
		users[u.ID] = &storage.User{ID: u.ID, Username: u.Username, Password: u.Password, FirstName: first, LastName: last,
			Email: u.Email, EmailVerified: !u.EmailUnverified}
	}
	clients := map[string]*storage.Client{o.ClientID: storage.WebClient(o.ClientID, o.ClientSecret, o.RedirectURIs...)}
	p := &Provider{}
	st := &opStorage{Storage: storage.NewStorageWithClients(users, clients), wrongKey: &p.WrongKey, postLogout: o.PostLogoutRedirectURIs}
	ln, err := net.Listen("tcp", o.Addr)
	if err != nil {
		return nil, err
	}
	p.Issuer = "http://" + ln.Addr().String()
	p.srv = &http.Server{Handler: exampleop.SetupServer(p.Issuer, st, nil, false), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// Close stops the provider.
func (p *Provider) Close() { _ = p.srv.Close() }

// userStore holds the provider's accounts (the example's UserStore).
type userStore map[string]*storage.User

func (u userStore) GetUserByID(id string) *storage.User { return u[id] }
func (u userStore) GetUserByUsername(name string) *storage.User {
	for _, x := range u {
		if x.Username == name {
			return x
		}
	}
	return nil
}
func (u userStore) ExampleClientID() string { return "service" }

// opStorage is the example storage with two changes: the client accepts our
// post-logout redirect URIs (the example's clients accept none), and the JWKS may
// publish a wrong key.
type opStorage struct {
	*storage.Storage
	wrongKey   *atomic.Bool
	postLogout []string
}

type client struct {
	op.Client
	postLogout []string
}

func (c client) PostLogoutRedirectURIs() []string { return c.postLogout }

func (s *opStorage) GetClientByClientID(ctx context.Context, id string) (op.Client, error) {
	c, err := s.Storage.GetClientByClientID(ctx, id)
	if err != nil {
		return nil, err
	}
	return client{Client: c, postLogout: s.postLogout}, nil
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
