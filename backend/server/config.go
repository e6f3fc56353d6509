package server

import (
	"net"
	"net/netip"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/jobs"
	"github.com/agentdesk/agentdesk/backend/mail"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Config is how a server runs.
type Config struct {
	DataDir string // holds agentdesk.db
	// DB is where the data lives (--db, store.ParseDB): the zero value is SQLite in
	// DataDir; a PostgreSQL location puts it in that database instead.
	DB   store.Location
	Addr string // host:port to listen on
	// FreePortIfTaken: when Addr's port is taken, listen on a free port of its host
	// instead of failing. The desktop window sets it for its default address: a
	// double-clicked app has no way to be given another (agents find the port it took
	// in the data directory, NoteURL).
	FreePortIfTaken bool
	// Synchronous is SQLite's synchronous mode: FULL (default) makes every acknowledged
	// write survive power loss; NORMAL survives a crash or kill -9 of agentdesk only,
	// and saves an fsync per commit.
	Synchronous string
	// EmbedderURL, if set, is an OpenAI-compatible embeddings endpoint (POST
	// {EmbedderURL}/v1/embeddings, e.g. a local Ollama) that embeds knowledge-base text
	// with EmbedderModel, sending EmbedderAPIKey as a Bearer token when set. Unset, the
	// built-in feature-hashing embedder runs offline (see backend/vector).
	EmbedderURL, EmbedderModel, EmbedderAPIKey string
	// EventRetention is how long the event log is kept for ?since= replay (default 7 days).
	EventRetention time.Duration
	// PublicURL is the address people type to reach the server (behind a reverse proxy,
	// its https URL). Browser pages from it, and only from it, may open the WebSockets
	// (the event stream, GraphQL subscriptions); without it, pages from the address the
	// server listens on (ownOrigins).
	PublicURL string
	// AllowedOrigins are further browser origins that may open the WebSockets (the
	// desktop window's pages).
	AllowedOrigins []string
	// ActivityRetention is how long the activity trail is kept (default 90 days).
	ActivityRetention time.Duration
	// BodyReadTimeout bounds how long a request body may take to arrive (default
	// DefaultBodyReadTimeout, plus a second for every 64 KiB the body declares); a
	// client slower than that is cut off. Negative: no bound.
	BodyReadTimeout time.Duration
	// OIDC turns team mode on: people sign in at /login with an OpenID Connect
	// provider (zero: off, the server works with tokens only).
	OIDC auth.OIDC
	// TrustedProxies are the reverse proxies (their addresses, by range) whose
	// X-Forwarded-For and X-Forwarded-Proto are believed: a request from one of them
	// is from the rightmost X-Forwarded-For address that is not itself trusted. That
	// client address is what the request log, a session's address and the rate limit
	// of refused credentials use. Empty: the peer is the client, the headers ignored.
	TrustedProxies []netip.Prefix
	// MetricsAddr, if set, is where Prometheus metrics are served (GET /metrics) on a
	// listener of their own, never the main one (backend/metrics, docs/metrics.md).
	MetricsAddr string
	// WebhooksAllowPrivate lets webhooks reach loopback, private, link-local and CGNAT
	// addresses (--webhooks-allow-private); off, they reach the public internet only.
	// The desktop window turns it on: its owner is the operator.
	WebhooksAllowPrivate bool
	// SMTP, if set (--smtp-url, --smtp-from), is where the emails to the people a
	// question asks go out (backend/service/mail.go); nil: no email.
	SMTP *mail.Config
	// Clock drives the job scheduler and the service's timestamps (default the system
	// clock); tests inject a jobstest.ManualClock.
	Clock jobs.Clock
}

// origins are the browser origins that may open the WebSockets: the server's own
// (ownOrigins) and the further ones of AllowedOrigins.
func (c Config) origins(listening net.Addr) []string {
	return append(ownOrigins(c.PublicURL, listening), c.AllowedOrigins...)
}

// ownOrigins is the server's own origin: its public URL when it has one, else the
// address it listens on, as http://host:port. localhost names a loopback address as
// well (the address people type), and a server listening on every interface
// (0.0.0.0, [::]) is reached on loopback at 127.0.0.1 or [::1]; the port is always the
// server's, so that a page served on another port of this machine is another origin.
func ownOrigins(publicURL string, listening net.Addr) []string {
	if publicURL != "" {
		return []string{publicURL}
	}
	host, port, err := net.SplitHostPort(listening.String())
	if err != nil {
		return nil
	}
	origin := func(h string) string { return "http://" + net.JoinHostPort(h, port) }
	ip := net.ParseIP(host)
	switch {
	case ip == nil:
		return []string{origin(host)}
	case ip.IsUnspecified():
		return []string{origin("127.0.0.1"), origin("::1"), origin("localhost")}
	case ip.IsLoopback():
		return []string{origin(host), origin("localhost")}
	}
	return []string{origin(host)}
}

// DefaultAddr is where the server listens unless told otherwise: loopback only, so that
// agents on this machine reach it and nothing else does.
const DefaultAddr = "127.0.0.1:8080"

// DBFile is the database's file name inside the data directory.
const DBFile = "agentdesk.db"

// DBPath is the database file of a data directory.
func DBPath(dataDir string) string { return filepath.Join(dataDir, DBFile) }

// DefaultDataDir is where the OS keeps this user's application data:
// $XDG_DATA_HOME/agentdesk or ~/.local/share/agentdesk on Linux,
// ~/Library/Application Support/agentdesk on macOS, %AppData%\agentdesk on Windows.
func DefaultDataDir() string {
	home, _ := os.UserHomeDir()
	switch runtime.GOOS {
	case "darwin":
		return filepath.Join(home, "Library", "Application Support", "agentdesk")
	case "windows":
		if d := os.Getenv("AppData"); d != "" {
			return filepath.Join(d, "agentdesk")
		}
	}
	if d := os.Getenv("XDG_DATA_HOME"); d != "" {
		return filepath.Join(d, "agentdesk")
	}
	return filepath.Join(home, ".local", "share", "agentdesk")
}
