package server

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"syscall"
	"time"

	"github.com/agentdesk/agentdesk/backend/api"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/jobs"
	"github.com/agentdesk/agentdesk/backend/metrics"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Server is a running agentdesk service.
type Server struct {
	Service *service.Service
	Hub     *events.Hub
	stopHub context.CancelFunc
	hubDone chan struct{}
	store   *store.Store
	http    *http.Server
	handler http.Handler // the router, without the connection-level wrapping
	ln      net.Listener
	served  chan error
	jobs    *jobs.Runner   // all background work (backend/jobs)
	metrics *metricsServer // nil unless cfg.MetricsAddr (metrics.go)
}

// Start opens the database (migrating it), makes sure the default project exists, and
// starts serving on cfg.Addr. It returns once the server accepts connections.
func Start(ctx context.Context, cfg Config) (*Server, error) {
	// The public URL makes session cookies Secure and names the origin changes made with
	// one must come from: token sessions (POST /api/session) too, not only team mode's.
	if cfg.OIDC.PublicURL == "" {
		cfg.OIDC.PublicURL = strings.TrimSuffix(cfg.PublicURL, "/")
	}
	if cfg.OIDC.Enabled() {
		if cfg.OIDC.PublicURL == "" {
			return nil, errors.New("team mode (--oidc-issuer) needs --public-url: the provider sends people back to PUBLIC_URL/auth/callback")
		}
		if cfg.PublicURL == "" {
			cfg.PublicURL = cfg.OIDC.PublicURL // its pages open the WebSockets
		}
	}
	hub := events.New(events.Options{Retention: cfg.EventRetention})
	commits := make(chan struct{}, 1) // wakes the webhook deliverer (backend/jobs)
	// The metrics are made first: the store, the service and the jobs report to them.
	var m *metrics.Metrics
	var svc *service.Service
	var st *store.Store
	if cfg.MetricsAddr != "" {
		m = metrics.New(metrics.Sources{
			QueueDepth: func() int { return st.QueueDepth() },
			Streams:    hub.Stats,
			WebhookLag: func(ctx context.Context) (time.Duration, error) { return svc.WebhookLag(ctx) },
		})
	}
	onCommit := func(evs []model.Event) {
		m.Committed(evs)
		hub.Notify(evs)
		select {
		case commits <- struct{}{}:
		default:
		}
	}
	// PostgreSQL: another server committed. Its events are read by the hub as this
	// server's own; the webhook deliverer and the scheduler look again.
	foreign := make(chan struct{}, 1)
	onForeign := func() {
		hub.Notify(nil)
		for _, c := range []chan struct{}{commits, foreign} {
			select {
			case c <- struct{}{}:
			default:
			}
		}
	}
	storeOpts := store.Options{OnCommit: onCommit, OnForeign: onForeign, Synchronous: cfg.Synchronous, AwaitDelivery: hub.AwaitDelivery}
	if m != nil {
		storeOpts.OnBatch = m.Batch
	}
	st, err := store.OpenLocation(ctx, cfg.DB, DBPath(cfg.DataDir), storeOpts)
	if err != nil {
		where := DBPath(cfg.DataDir)
		if cfg.DB.Engine == store.Postgres {
			where = cfg.DB.Redacted()
		}
		return nil, fmt.Errorf("open database %s: %w", where, err)
	}
	var now func() time.Time
	if cfg.Clock != nil {
		now = cfg.Clock.Now
	}
	svcOpts := service.Options{Now: now, Embedder: cfg.Embedder(), OIDC: cfg.OIDC, WebhooksAllowPrivate: cfg.WebhooksAllowPrivate}
	if m != nil {
		svcOpts.OnWebhookDelivery = m.Delivery
	}
	svc = service.New(st, svcOpts)
	hub.Attach(st, svc.CheckCredentials) // streams end when their credential does
	if err := svc.EnsureDefaultProject(ctx); err != nil {
		svc.Close()
		st.Close()
		return nil, fmt.Errorf("prepare database: %w", err)
	}
	ln, err := net.Listen("tcp", cfg.Addr)
	if errors.Is(err, syscall.EADDRINUSE) && cfg.FreePortIfTaken {
		if host, _, splitErr := net.SplitHostPort(cfg.Addr); splitErr == nil {
			if ln, err = net.Listen("tcp", net.JoinHostPort(host, "0")); err == nil {
				slog.Warn("the default address is taken by another program: listening on a free port instead",
					"taken", cfg.Addr, "url", "http://"+ln.Addr().String())
			}
		}
	}
	if err != nil {
		svc.Close()
		st.Close()
		return nil, listenError(cfg.Addr, err)
	}
	var ms *metricsServer
	if m != nil {
		if ms, err = startMetrics(cfg.MetricsAddr, m); err != nil {
			ln.Close()
			svc.Close()
			st.Close()
			return nil, err
		}
	}
	bodyTimeout := cfg.BodyReadTimeout
	if bodyTimeout == 0 {
		bodyTimeout = DefaultBodyReadTimeout
	}
	hubCtx, stopHub := context.WithCancel(context.Background())
	hubDone := make(chan struct{})
	go func() { hub.Run(hubCtx); close(hubDone) }()
	s := &Server{
		Service: svc,
		Hub:     hub,
		stopHub: stopHub,
		hubDone: hubDone,
		store:   st,
		ln:      ln,
		served:  make(chan error, 1),
		metrics: ms,
		http: &http.Server{
			ReadHeaderTimeout: 10 * time.Second,
			IdleTimeout:       2 * time.Minute,
			ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
		},
	}
	router := api.NewRouter(svc, hub, cfg.origins(ln.Addr()), cfg.TrustedProxies...)
	if m != nil {
		router.ObserveRequests(m.Request)
	}
	// s.handler is the desktop window's in-process handler; the listener gets the
	// body deadline, the security headers and net/http's refusals in the envelope.
	s.handler = router
	s.http.Handler = shapeRawErrors(s.http, withBodyDeadline(bodyTimeout, withSecurityHeaders(router)))
	jobOpts := jobs.Options{Clock: cfg.Clock, ActivityRetention: cfg.ActivityRetention, Commits: commits}
	if cfg.DB.Engine == store.Postgres {
		jobOpts.Foreign = foreign
	}
	if m != nil {
		jobOpts.OnRun = m.Work
	}
	if cfg.SMTP != nil {
		// The links in the emails lead to the address people type, else to this one.
		base := cfg.PublicURL
		if base == "" {
			base = s.URL()
		}
		jobOpts.Mail = &jobs.Mail{Sender: cfg.SMTP, BaseURL: base}
		slog.Info("questions are emailed to the people they ask", "smtp", cfg.SMTP.String(), "from", cfg.SMTP.From.String(), "links", base)
	}
	s.jobs = jobs.Start(svc, hub, jobOpts)
	go func() { s.served <- s.http.Serve(rawListener{ln}) }()
	return s, nil
}

func listenError(addr string, err error) error {
	if errors.Is(err, syscall.EADDRINUSE) {
		return fmt.Errorf("cannot listen on %s: the address is already in use by another program; choose another with --addr 127.0.0.1:PORT or AGENTDESK_ADDR", addr)
	}
	return fmt.Errorf("cannot listen on %s: %w", addr, err)
}

// URL is the base address the server answers on.
func (s *Server) URL() string { return "http://" + s.ln.Addr().String() }

// Shutdown stops accepting connections, lets in-flight requests finish (until ctx ends),
// then closes the service and the database.
func (s *Server) Shutdown(ctx context.Context) error {
	s.Hub.Close() // event streams are hijacked connections: Shutdown does not wait for them
	err := s.http.Shutdown(ctx)
	s.stopHub()
	<-s.hubDone // the hub reads the store: it stops before the store closes
	if serveErr := <-s.served; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
		err = errors.Join(err, serveErr)
	}
	s.metrics.close() // its gauges read the store
	s.jobs.Stop()     // before the service: a run in progress finishes its transaction
	s.Service.Close()
	return errors.Join(err, s.store.Close())
}

// Run serves until ctx ends (a signal), then shuts down gracefully.
func Run(ctx context.Context, cfg Config) error {
	if err := startProfiler(); err != nil {
		return err
	}
	paceGC() // gc.go; GOGC in the environment turns it off
	// One server per data directory, as the desktop window does (lock.go).
	lock, err := LockDataDir(cfg.DataDir)
	if err != nil {
		return err
	}
	defer lock.Release()
	fresh := IsNewDatabase(cfg.DataDir)
	s, err := Start(ctx, cfg)
	if err != nil {
		return err
	}
	if fresh {
		slog.Info(NewDatabaseNote(cfg.DataDir))
	}
	lock.Note(s.URL())
	// CLI commands beside it (agent env) default to this URL (datadir.go).
	if err := NoteURL(cfg.DataDir, cfg.PublicURL, s.URL()); err != nil {
		slog.Warn("could not note the server's URL in the data directory", "err", err)
	}
	slog.Info("agentdesk is listening", "url", s.URL(), "data", cfg.DataDir)
	<-ctx.Done()
	slog.Info("shutting down: finishing in-flight requests")
	shutdownCtx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	err = s.Shutdown(shutdownCtx)
	ForgetURL(cfg.DataDir)
	if err != nil {
		return fmt.Errorf("shutdown: %w", err)
	}
	// The group commit's work: writes per batch is how many requests shared a commit.
	st := s.store.Stats()
	slog.Info("stopped cleanly", "writes", st.Writes, "batches", st.Batches, "fsyncs", st.Syncs,
		"writer_exec", st.Exec.Round(time.Millisecond), "writer_commit", st.Commit.Round(time.Millisecond),
		"fsync", st.Sync.Round(time.Millisecond))
	return nil
}

// Store is the server's store (tests of several servers on one database).
func (s *Server) Store() *store.Store { return s.store }

// Handler is the server's HTTP handler, for the desktop window to serve in-process.
func (s *Server) Handler() http.Handler { return s.handler }
