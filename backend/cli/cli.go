package cli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/url"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/agentdesk/agentdesk/backend/agentrun"
	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/mail"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/store/sqlite"
	"github.com/agentdesk/agentdesk/backend/version"
)

// Desktop opens the desktop window; it returns the exit status.
type Desktop func(cfg server.Config) int

const usage = `agentdesk: tasks and conversations for software agents and people.

Usage:
  agentdesk [--data DIR]                       open the desktop window
  agentdesk --serve [--addr HOST:PORT] [--data DIR] [--log-format text|json] [--log-level info]
                   [--synchronous full|normal]
                   [--activity-retention 90d] [--public-url URL] [--trusted-proxies CIDR,...]
                   [--webhooks-allow-private] [--smtp-url smtp[s]://USER:PASS@HOST:PORT --smtp-from ADDRESS]
                   [--oidc-issuer URL --oidc-client-id ID [--oidc-scopes S] [--oidc-allowed-domains a.com,b.org]
                    [--oidc-provider-name NAME] [--oidc-trust-email]]
                                               run the server headless
  agentdesk project create --name N [--namespace NS]
  agentdesk project list                       one JSON object per project: id, name, namespace
  agentdesk project id                         the default project's id, e.g. --project "$(agentdesk project id)"
  agentdesk project rotate-secret --project ID replaces the agents' secret (old digests stop working);
                                               prints id, name, namespace, token_secret
  agentdesk agent create --project ID --name N
  agentdesk agent env --project ID --name N [--url URL]
                                               the agent's environment; URL defaults to the server
                                               running on the data directory (its server.url)
  agentdesk agent run --name N [--poll 2s] [--pause 500ms]
                                               the reference agent (reads agent env's variables)
  agentdesk mcp [--url URL]                    an MCP server on stdin/stdout for Claude Code, Cursor, ...
                                               (docs/mcp.md), as the agent of agent env's variables
                                               or the holder of AGENTDESK_TOKEN; URL defaults to
                                               $AGENTDESK_URL, else the server running on the data directory
  agentdesk token create --project ID --name N --scopes a,b [--type platform|data] [--expires 90d]
  agentdesk user add --project ID --email E --role owner|admin|member|viewer
                                               invite a person (before they first sign in); prints the member
  agentdesk backup --out FILE
  agentdesk restore --from FILE                puts a backup in place of the database (stop agentdesk first)
  agentdesk migrate --to postgres://USER:PASSWORD@HOST/DB
                                               copies the database into an empty PostgreSQL database, ids
                                               included (reads a snapshot: a server may run meanwhile, but
                                               its later writes are not copied; docs/postgres.md)
  agentdesk version                            the version, commit and build date (also --version)

Knowledge bases embed text with a built-in offline embedder (feature hashing). To use a
model instead, give --serve an OpenAI-compatible endpoint (Ollama, llama.cpp, OpenAI):
  --embedder-url URL [--embedder-model NAME]   POST URL/v1/embeddings (model default nomic-embed-text;
                                               env AGENTDESK_EMBEDDER_API_KEY is sent as its Bearer key)

Every command takes --data DIR (env AGENTDESK_DATA; default %s).
--db URL (env AGENTDESK_DB): a postgres://USER:PASSWORD@HOST/DB database instead of SQLite in
  the data directory; several servers may share one (docs/postgres.md).
--addr defaults to env AGENTDESK_ADDR, else %s (where the window takes a free port
  when another program holds that one).
--public-url (env AGENTDESK_PUBLIC_URL): the address browsers use behind a reverse proxy;
  without it only pages from the server's own address may open the WebSockets.
--trusted-proxies CIDR,... (env AGENTDESK_TRUSTED_PROXIES): the reverse proxies whose
  X-Forwarded-For and X-Forwarded-Proto are believed (e.g. 127.0.0.1 for Caddy or nginx on
  this machine); the client address they name is the one logged, recorded with sessions,
  and rate-limited after refused credentials (loopback clients never are).
--log-level debug|info|warn|error (env AGENTDESK_LOG_LEVEL; default info): info logs what an
  operator needs (start, stop, failures); debug adds one line per request.
--metrics-addr HOST:PORT (env AGENTDESK_METRICS_ADDR): serve Prometheus metrics at
  http://HOST:PORT/metrics, on a listener of their own (off by default; docs/metrics.md).
--webhooks-allow-private (env AGENTDESK_WEBHOOKS_ALLOW_PRIVATE=1): let webhooks reach loopback,
  private, link-local and CGNAT addresses; without it they reach the public internet only
  (the desktop window always allows them; docs/webhooks.md).
--smtp-url smtp[s]://USER:PASS@HOST:PORT (env AGENTDESK_SMTP_URL; the env keeps the password out of
  ps) and --smtp-from ADDRESS (env AGENTDESK_SMTP_FROM): email each question to the people it asks,
  with links that answer it (docs/email.md).
Team mode: people sign in at /login with an OpenID Connect provider (--oidc-issuer, env
  AGENTDESK_OIDC_ISSUER; --oidc-client-id, env AGENTDESK_OIDC_CLIENT_ID; the client secret
  only from env AGENTDESK_OIDC_CLIENT_SECRET). It needs --public-url: the provider sends
  people back to PUBLIC_URL/auth/callback.
`

// usageError is a bad flag or argument: one line on stderr, exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return usageError{fmt.Sprintf(format, args...)} }

// Main runs the command line and returns the exit status.
func Main(args []string, stdout, stderr io.Writer, desktop Desktop) int {
	err := run(args, stdout, stderr, desktop)
	var ue usageError
	var es exitStatus
	var hr helpRequested
	switch {
	case err == nil:
		return 0
	case errors.As(err, &hr):
		hr.print(stdout)
		return 0
	case errors.As(err, &ue):
		fmt.Fprintf(stderr, "agentdesk: %s (see agentdesk --help)\n", ue.msg)
		return 2
	case errors.As(err, &es):
		return int(es) // the desktop shell has said why
	default:
		fmt.Fprintf(stderr, "agentdesk: %s\n", err)
		return 1
	}
}

// exitStatus is the desktop shell's non-zero exit status, passed on as it is.
type exitStatus int

func (e exitStatus) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

func defaultDataDir() string {
	if d := os.Getenv("AGENTDESK_DATA"); d != "" {
		return d
	}
	return server.DefaultDataDir()
}

func defaultAddr() string {
	if a := os.Getenv("AGENTDESK_ADDR"); a != "" {
		return a
	}
	return server.DefaultAddr
}

// newFlags makes a flag set that reports errors to us instead of printing usage.
func newFlags(name string, dataDir *string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(dataDir, "data", *dataDir, "data directory")
	fs.String("db", os.Getenv("AGENTDESK_DB"), "the database: a postgres:// URL (default: SQLite in the data directory)")
	return fs
}

// noDatabase are the commands that never open the database: AGENTDESK_DB does not concern them.
var noDatabase = map[string]bool{"version": true, "agent run": true, "migrate": true, "mcp": true} // migrate takes --to

// checkDB checks the --db flag (or AGENTDESK_DB) of a parsed flag set: empty (SQLite in
// the data directory) or a postgres:// URL (dbLocation then reads it). Messages never
// repeat the value: it may hold a password.
func checkDB(fs *flag.FlagSet) error {
	if _, err := store.ParseDB(fs.Lookup("db").Value.String()); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// dbLocation is the --db of a flag set that checkDB has accepted.
func dbLocation(fs *flag.FlagSet) store.Location {
	loc, _ := store.ParseDB(fs.Lookup("db").Value.String())
	return loc
}

// helpRequested is -h or --help given to a subcommand: Main prints its usage on stdout
// and exits 0, as a request for help is not a mistake.
type helpRequested struct {
	name string        // the command, such as "agent env", or a group such as "agent"
	fs   *flag.FlagSet // the command's flags; nil for a group
}

func (helpRequested) Error() string { return "help requested" }

// print writes the command's lines of the usage text, then its flags.
func (h helpRequested) print(w io.Writer) {
	name := "agentdesk " + h.name
	fmt.Fprintln(w, "Usage:")
	for _, line := range strings.Split(fmt.Sprintf(usage, server.DefaultDataDir(), server.DefaultAddr), "\n") {
		if rest, ok := strings.CutPrefix(strings.TrimSpace(line), name); ok && (rest == "" || rest[0] == ' ') {
			fmt.Fprintln(w, line)
		}
	}
	if h.fs != nil {
		fmt.Fprintln(w, "\nFlags:")
		h.fs.SetOutput(w)
		h.fs.PrintDefaults()
	}
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return helpRequested{fs.Name(), fs}
		}
		return usagef("%v", err)
	}
	if fs.NArg() > 0 {
		return usagef("unexpected argument %q", fs.Arg(0))
	}
	if !noDatabase[fs.Name()] {
		return checkDB(fs)
	}
	return nil
}

func run(args []string, stdout, stderr io.Writer, desktop Desktop) error {
	dataDir := defaultDataDir()
	fs := newFlags("agentdesk", &dataDir)
	serve := fs.Bool("serve", false, "run the server headless")
	addr := fs.String("addr", defaultAddr(), "listen address")
	logFormat := fs.String("log-format", "text", "text or json")
	logLevel := fs.String("log-level", envOr("AGENTDESK_LOG_LEVEL", "info"), "debug (every request too), info, warn or error")
	embedderURL := fs.String("embedder-url", "", "OpenAI-compatible embeddings endpoint for knowledge bases (default: the built-in embedder)")
	embedderModel := fs.String("embedder-model", "", "the model asked of --embedder-url")
	synchronous := fs.String("synchronous", "full", "full (writes survive power loss) or normal (survive a crash only)")
	activityRetention := fs.String("activity-retention", "90d", "how long the activity trail is kept, e.g. 90d or 720h")
	publicURL := fs.String("public-url", os.Getenv("AGENTDESK_PUBLIC_URL"), "the URL people type to reach the server (behind a reverse proxy); its pages may open the WebSockets and make changes with a session cookie (Secure over https)")
	oidcIssuer := fs.String("oidc-issuer", os.Getenv("AGENTDESK_OIDC_ISSUER"), "team mode: the OpenID Connect provider's issuer URL")
	oidcClientID := fs.String("oidc-client-id", os.Getenv("AGENTDESK_OIDC_CLIENT_ID"), "team mode: the client id registered at the provider")
	oidcName := fs.String("oidc-provider-name", os.Getenv("AGENTDESK_OIDC_PROVIDER_NAME"), "team mode: the provider's name on the sign-in page (\"Sign in with NAME\"; default the issuer's host)")
	oidcScopes := fs.String("oidc-scopes", envOr("AGENTDESK_OIDC_SCOPES", "openid email profile"), "team mode: the scopes asked of the provider")
	oidcDomains := fs.String("oidc-allowed-domains", os.Getenv("AGENTDESK_OIDC_ALLOWED_DOMAINS"), "team mode: email domains whose people join as members on first sign-in (comma list; empty: invited people only)")
	oidcTrustEmail := fs.Bool("oidc-trust-email", false, "team mode: take every email the provider gives as verified, for providers that never send email_verified (Entra ID); only where people cannot set their own email (env AGENTDESK_OIDC_TRUST_EMAIL=true)")
	metricsAddr := fs.String("metrics-addr", os.Getenv("AGENTDESK_METRICS_ADDR"), "serve Prometheus metrics at http://ADDR/metrics on a listener of their own (default: off)")
	webhooksAllowPrivate := fs.Bool("webhooks-allow-private", os.Getenv("AGENTDESK_WEBHOOKS_ALLOW_PRIVATE") == "1", "let webhooks reach loopback, private, link-local and CGNAT addresses (default: the public internet only)")
	smtpURL := fs.String("smtp-url", os.Getenv("AGENTDESK_SMTP_URL"), "email questions through this SMTP server: smtp://USER:PASS@HOST:PORT (STARTTLS when offered) or smtps:// (TLS)")
	smtpFrom := fs.String("smtp-from", os.Getenv("AGENTDESK_SMTP_FROM"), "the address the question emails come from, e.g. agentdesk@example.com")
	trustedProxies := fs.String("trusted-proxies", os.Getenv("AGENTDESK_TRUSTED_PROXIES"), "reverse proxies (CIDR ranges or addresses, comma list) whose X-Forwarded-For and X-Forwarded-Proto are believed")
	help := fs.Bool("help", false, "show usage")
	fs.BoolVar(help, "h", false, "show usage")
	showVersion := fs.Bool("version", false, "print the version, commit and build date")
	if err := fs.Parse(args); err != nil {
		return usagef("%v", err)
	}
	if *help {
		fmt.Fprintf(stdout, usage, server.DefaultDataDir(), server.DefaultAddr)
		return nil
	}
	if *showVersion {
		return runCommand(append([]string{"version"}, fs.Args()...), dataDir, stdout, stderr)
	}
	// The server and the desktop open the database; a subcommand checks its own --db
	// (AGENTDESK_DB alone does not concern `agentdesk version`), but a --db given before
	// it is checked here.
	dbGiven := false
	fs.Visit(func(f *flag.Flag) { dbGiven = dbGiven || f.Name == "db" })
	if fs.NArg() == 0 || dbGiven {
		if err := checkDB(fs); err != nil {
			return err
		}
	}
	if fs.NArg() > 0 {
		if *serve {
			return usagef("--serve takes no subcommand")
		}
		args := fs.Args()
		if dbGiven { // for the command, unless it gets a --db of its own
			args = withDBFlag(args, fs.Lookup("db").Value.String())
		}
		return runCommand(args, dataDir, stdout, stderr)
	}
	var level slog.Level
	if err := level.UnmarshalText([]byte(*logLevel)); err != nil {
		return usagef("--log-level must be debug, info, warn or error, not %q", *logLevel)
	}
	logOpts := &slog.HandlerOptions{Level: level}
	switch *logFormat {
	case "text":
		slog.SetDefault(slog.New(slog.NewTextHandler(stderr, logOpts)))
	case "json":
		slog.SetDefault(slog.New(slog.NewJSONHandler(stderr, logOpts)))
	default:
		return usagef("--log-format must be text or json")
	}
	switch *synchronous {
	case "full", "normal":
	default:
		return usagef("--synchronous must be full or normal")
	}
	retention, err := parseRetention(*activityRetention)
	if err != nil {
		return err
	}
	if u, err := url.Parse(*publicURL); *publicURL != "" && (err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "") {
		return usagef("--public-url must be an http or https URL such as https://agentdesk.example.com, not %q", *publicURL)
	}
	proxies, err := server.ParseTrustedProxies(*trustedProxies)
	if err != nil {
		return usagef("%v", err)
	}
	cfg := server.Config{DataDir: dataDir, DB: dbLocation(fs), Addr: *addr, Synchronous: strings.ToUpper(*synchronous), ActivityRetention: retention,
		PublicURL: *publicURL, TrustedProxies: proxies, MetricsAddr: *metricsAddr, WebhooksAllowPrivate: *webhooksAllowPrivate}
	if cfg.SMTP, err = mail.ParseConfig(*smtpURL, *smtpFrom); err != nil {
		return usagef("%v", err)
	}
	if _, _, err := net.SplitHostPort(*metricsAddr); *metricsAddr != "" && err != nil {
		return usagef("--metrics-addr must be host:port such as 127.0.0.1:9090, not %q", *metricsAddr)
	}
	if err := setEmbedder(&cfg, *embedderURL, *embedderModel); err != nil {
		return err
	}
	oidc, err := oidcConfig(*publicURL, *oidcIssuer, *oidcClientID, *oidcScopes, *oidcDomains)
	if err != nil {
		return err
	}
	oidc.ProviderName = strings.TrimSpace(*oidcName)
	oidc.TrustEmail = *oidcTrustEmail
	if env := os.Getenv("AGENTDESK_OIDC_TRUST_EMAIL"); env != "" && !flagGiven(fs, "oidc-trust-email") {
		if oidc.TrustEmail, err = strconv.ParseBool(env); err != nil {
			return usagef("AGENTDESK_OIDC_TRUST_EMAIL is true or false, not %q", env)
		}
	}
	cfg.OIDC = oidc
	if !*serve {
		// Double-clicked, the window has no way to be given another address.
		cfg.FreePortIfTaken = !flagGiven(fs, "addr") && os.Getenv("AGENTDESK_ADDR") == ""

		if code := desktop(cfg); code != 0 {
			return exitStatus(code)
		}
		return nil
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return server.Run(ctx, cfg)
}

// withDBFlag puts --db=db after the command's words (one, or two as in "project list"),
// before the command's own flags, which may give another.
func withDBFlag(args []string, db string) []string {
	words := 1
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		words = 2
	}
	return slices.Concat(args[:words], []string{"--db=" + db}, args[words:])
}

func runCommand(args []string, dataDir string, stdout, stderr io.Writer) error {
	cmd := args[0]
	if len(args) > 1 && !strings.HasPrefix(args[1], "-") {
		cmd += " " + args[1]
		args = args[2:]
	} else {
		args = args[1:]
	}
	switch cmd {
	case "version":
		if err := parse(newFlags(cmd, &dataDir), args); err != nil {
			return err
		}
		fmt.Fprintln(stdout, version.String())
		return nil
	case "project create":
		return projectCreate(args, dataDir, stdout, stderr)
	case "project list":
		return projectList(args, dataDir, stdout, stderr)
	case "project id":
		return projectID(args, dataDir, stdout, stderr)
	case "project rotate-secret":
		return projectRotateSecret(args, dataDir, stdout, stderr)
	case "agent create":
		return agentCreate(args, dataDir, stdout, stderr)
	case "agent env":
		return agentEnv(args, dataDir, stdout, stderr)
	case "agent run":
		return agentRun(args, stderr)
	case "mcp":
		return serveMCP(args, dataDir, stderr) // mcp.go
	case "token create":
		return tokenCreate(args, dataDir, stdout, stderr)
	case "user add":
		return userAdd(args, dataDir, stdout, stderr)
	case "backup":
		return backup(args, dataDir, stdout, stderr)
	case "restore":
		return restore(args, dataDir, stdout, stderr)
	case "migrate":
		return migrate(args, dataDir, stdout, stderr) // migrate.go
	}
	if len(args) > 0 && (args[0] == "-h" || args[0] == "-help" || args[0] == "--help") {
		return helpRequested{name: cmd} // "agentdesk agent --help": the group's commands
	}
	return usagef("unknown command %q", cmd)
}

// withService opens the data directory's database for one command. A database that
// did not exist is created, and stderr says so, with where: a mistyped --data is
// noticed at once instead of filling a second, empty database.
// With --db (or AGENTDESK_DB) it opens that PostgreSQL database instead.
func withService(fs *flag.FlagSet, dataDir string, stderr io.Writer, fn func(ctx context.Context, svc *service.Service) error) error {
	ctx := context.Background()
	loc := dbLocation(fs)
	fresh := loc.Engine == store.SQLite && server.IsNewDatabase(dataDir)
	st, err := store.OpenLocation(ctx, loc, server.DBPath(dataDir), store.Options{})
	if err != nil {
		where := server.DBPath(dataDir)
		if loc.Engine == store.Postgres {
			where = loc.Redacted()
		}
		return fmt.Errorf("open database %s: %w", where, err)
	}
	if fresh {
		fmt.Fprintln(stderr, server.NewDatabaseNote(dataDir))
	}
	// The activity trail records every change a command makes as the local owner's, via the CLI.
	owner := auth.Owner("")
	svc := service.New(st, service.Options{Actor: audit.Actor{Kind: string(owner.Kind), Name: owner.Name, Via: audit.ViaCLI}})
	err = svc.EnsureDefaultProject(ctx)
	if err == nil {
		err = fn(ctx, svc)
	}
	svc.Close()
	return errors.Join(err, st.Close())
}

func required(name, v string) error {
	if strings.TrimSpace(v) == "" {
		return usagef("--%s is required", name)
	}
	return nil
}

func printJSON(w io.Writer, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintln(w, string(b))
	return err
}

func projectCreate(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("project create", &dataDir)
	name := fs.String("name", "", "project name")
	namespace := fs.String("namespace", "", "orchestration namespace")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := required("name", *name); err != nil {
		return err
	}
	return withService(fs, dataDir, stderr, func(ctx context.Context, svc *service.Service) error {
		p, err := svc.CreateProject(ctx, auth.Owner(""), *name, *namespace)
		if err != nil {
			return err
		}
		return printJSON(stdout, map[string]string{"id": p.ID, "name": p.Name, "namespace": p.Namespace, "token_secret": p.TokenSecret})
	})
}

func projectRotateSecret(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("project rotate-secret", &dataDir)
	project := fs.String("project", "", "project id")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := required("project", *project); err != nil {
		return err
	}
	return withService(fs, dataDir, stderr, func(ctx context.Context, svc *service.Service) error {
		p, err := svc.RotateProjectSecret(ctx, auth.Owner(*project))
		if err != nil {
			return err
		}
		return printJSON(stdout, map[string]string{"id": p.ID, "name": p.Name, "namespace": p.Namespace, "token_secret": p.TokenSecret})
	})
}

func projectList(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("project list", &dataDir)
	if err := parse(fs, args); err != nil {
		return err
	}
	return withService(fs, dataDir, stderr, func(ctx context.Context, svc *service.Service) error {
		projects, err := svc.Projects(ctx, auth.Owner(""))
		if err != nil {
			return err
		}
		for _, p := range projects {
			if err := printJSON(stdout, map[string]string{"id": p.ID, "name": p.Name, "namespace": p.Namespace}); err != nil {
				return err
			}
		}
		return nil
	})
}

// projectID prints the default project's id (the first project, which every data
// directory has), alone on its line: for $(agentdesk project id) in other commands.
func projectID(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("project id", &dataDir)
	if err := parse(fs, args); err != nil {
		return err
	}
	return withService(fs, dataDir, stderr, func(ctx context.Context, svc *service.Service) error {
		projects, err := svc.Projects(ctx, auth.Owner(""))
		if err != nil {
			return err
		}
		if len(projects) == 0 {
			return errors.New("this data directory has no project") // EnsureDefaultProject makes one: cannot happen
		}
		_, err = fmt.Fprintln(stdout, projects[0].ID)
		return err
	})
}

func agentCreate(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("agent create", &dataDir)
	project := fs.String("project", "", "project id")
	name := fs.String("name", "", "agent name")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errors.Join(required("project", *project), required("name", *name)); err != nil {
		return usagef("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return withService(fs, dataDir, stderr, func(ctx context.Context, svc *service.Service) error {
		a, err := svc.CreateAgent(ctx, auth.Owner(*project), *name)
		if err != nil {
			return err
		}
		return printJSON(stdout, map[string]any{"id": a.ID, "name": a.Name})
	})
}

func agentEnv(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("agent env", &dataDir)
	project := fs.String("project", "", "project id")
	name := fs.String("name", "", "agent name")
	url := fs.String("url", "", "agentdesk's base URL as the agent reaches it (default: the URL of the server running on the data directory, else http://ADDR)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errors.Join(required("project", *project), required("name", *name)); err != nil {
		return usagef("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if *url == "" {
		*url = server.RunningURL(dataDir) // what a server running on this data directory noted
	}
	if *url == "" {
		*url = "http://" + defaultAddr()
	}
	return withService(fs, dataDir, stderr, func(ctx context.Context, svc *service.Service) error {
		env, err := svc.AgentEnv(ctx, auth.Owner(*project), *name, *url)
		if err != nil {
			return err
		}
		for _, v := range env {
			fmt.Fprintf(stdout, "export %s=%s\n", v.Name, shellQuote(v.Value))
		}
		return nil
	})
}

func agentRun(args []string, stderr io.Writer) error {
	var unused string
	fs := newFlags("agent run", &unused)
	name := fs.String("name", os.Getenv("AGENT_NAME"), "agent name (default $AGENT_NAME)")
	url := fs.String("url", "", "agentdesk's base URL (default $AGENTDESK_URL)")
	poll := fs.Duration("poll", 2*time.Second, "how often to look for work")
	pause := fs.Duration("pause", 500*time.Millisecond, "time spent on each step")
	answerWithin := fs.Duration("answer-within", 24*time.Hour, "the deadline of each question it asks (0: none); unanswered by then, the task fails")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := required("name", *name); err != nil {
		return err
	}
	if *poll <= 0 || *pause < 0 || *answerWithin < 0 {
		return usagef("--poll must be positive, --pause and --answer-within not negative")
	}
	cfg, err := agentrun.ConfigFromEnv()
	if err != nil {
		return err
	}
	cfg.Name, cfg.Poll, cfg.Pause, cfg.AnswerWithin = *name, *poll, *pause, *answerWithin
	if *url != "" {
		cfg.URL = *url
	}
	cfg.Log = slog.New(slog.NewTextHandler(stderr, nil))
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return agentrun.New(cfg).Run(ctx)
}

// shellQuote quotes v for a POSIX shell when it holds anything but safe characters.
func shellQuote(v string) string {
	safe := v != ""
	for _, r := range v {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("_-.:/@%+=,", r)) {
			safe = false
			break
		}
	}
	if safe {
		return v
	}
	return "'" + strings.ReplaceAll(v, "'", `'\''`) + "'"
}

func tokenCreate(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("token create", &dataDir)
	project := fs.String("project", "", "project id")
	name := fs.String("name", "", "token name")
	scopes := fs.String("scopes", "", "comma-separated scopes")
	typ := fs.String("type", "platform", "platform or data")
	expires := fs.String("expires", "", "lifetime, e.g. 90d or 12h (default: no expiry)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errors.Join(required("project", *project), required("name", *name), required("scopes", *scopes)); err != nil {
		return usagef("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	if *typ != "platform" && *typ != "data" {
		return usagef("--type must be platform or data")
	}
	in := service.CreateTokenInput{Name: *name, Type: *typ, Scopes: auth.SplitScopes(*scopes)}
	if *expires != "" {
		d, err := parseLifetime(*expires)
		if err != nil {
			return err
		}
		at := time.Now().Add(d).UTC()
		in.ExpiresAt = &at
	}
	return withService(fs, dataDir, stderr, func(ctx context.Context, svc *service.Service) error {
		value, _, err := svc.CreateToken(ctx, auth.Owner(*project), in)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, value)
		return err
	})
}

// parseRetention reads --activity-retention: a whole number of days (90d) or a Go duration.
func parseRetention(s string) (time.Duration, error) {
	if _, err := parseLifetime(s); err != nil {
		return 0, usagef("--activity-retention must be a positive duration such as 90d or 720h, not %q", s)
	}
	return parseLifetime(s)
}

// parseLifetime reads a Go duration, or a whole number of days such as 90d.
func parseLifetime(s string) (time.Duration, error) {
	if days, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(days)
		if err == nil && n > 0 {
			return time.Duration(n) * 24 * time.Hour, nil
		}
	} else if d, err := time.ParseDuration(s); err == nil && d > 0 {
		return d, nil
	}
	return 0, usagef("--expires must be a positive lifetime such as 90d or 12h, not %q", s)
}

func backup(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("backup", &dataDir)
	out := fs.String("out", "", "file to write")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := required("out", *out); err != nil {
		return err
	}
	return withService(fs, dataDir, stderr, func(ctx context.Context, svc *service.Service) error {
		path, err := svc.Backup(ctx, auth.Owner(""), *out)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintln(stdout, path)
		return err
	})
}

// restore puts a backup in place of the data directory's database (sqlite.Restore),
// holding the directory's lock so that no server runs on it meanwhile.
func restore(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("restore", &dataDir)
	from := fs.String("from", "", "the backup file to restore")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := required("from", *from); err != nil {
		return err
	}
	if dbLocation(fs).Engine == store.Postgres {
		return usagef("restore puts a SQLite backup in place of the data directory's database; on PostgreSQL restore with pg_restore or psql (see docs/postgres.md)")
	}
	if _, err := os.Stat(*from); err != nil {
		return fmt.Errorf("restore: cannot read the backup: %w", err)
	}
	lock, err := server.LockDataDir(dataDir)
	var locked *server.LockedError
	if errors.As(err, &locked) {
		who := "another agentdesk"
		if locked.PID > 0 {
			who += fmt.Sprintf(" (pid %d)", locked.PID)
		}
		if locked.Addr != "" {
			who += " serving at " + locked.Addr
		} else {
			who += " (a desktop window, or a server starting)"
		}
		return fmt.Errorf("cannot restore into %s: %s has it open; stop it first, then restore", dataDir, who)
	}
	if err != nil {
		return err
	}
	defer lock.Release()
	res, err := sqlite.Restore(context.Background(), *from, server.DBPath(dataDir), time.Now())
	if err != nil {
		return fmt.Errorf("restore: %w", err)
	}
	return printJSON(stdout, res)
}

// setEmbedder checks --embedder-url and --embedder-model and puts them in cfg.
func setEmbedder(cfg *server.Config, rawURL, model string) error {
	if rawURL == "" {
		if model != "" {
			return usagef("--embedder-model needs --embedder-url")
		}
		return nil
	}
	u, err := url.Parse(rawURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--embedder-url must be an http:// or https:// URL, such as http://127.0.0.1:11434")
	}
	cfg.EmbedderURL, cfg.EmbedderModel, cfg.EmbedderAPIKey = rawURL, model, os.Getenv("AGENTDESK_EMBEDDER_API_KEY")
	return nil
}

// flagGiven reports whether the command line set the flag (which wins over its
// environment variable).
func flagGiven(fs *flag.FlagSet, name string) bool {
	given := false
	fs.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

func envOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// oidcConfig checks team mode's flags: none (no --oidc-issuer) is a server as before.
func oidcConfig(publicURL, issuer, clientID, scopes, domains string) (auth.OIDC, error) {
	if issuer == "" {
		return auth.OIDC{}, nil
	}
	if u, err := url.Parse(issuer); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return auth.OIDC{}, usagef("--oidc-issuer must be the provider's http or https issuer URL, not %q", issuer)
	}
	if publicURL == "" {
		return auth.OIDC{}, usagef("--oidc-issuer needs --public-url (env AGENTDESK_PUBLIC_URL): the provider sends people back to PUBLIC_URL/auth/callback, so register that redirect URI and say the URL here")
	}
	if clientID == "" {
		return auth.OIDC{}, usagef("--oidc-issuer needs --oidc-client-id (env AGENTDESK_OIDC_CLIENT_ID), the client registered at the provider")
	}
	o := auth.OIDC{PublicURL: strings.TrimSuffix(publicURL, "/"), Issuer: issuer, ClientID: clientID,
		ClientSecret: os.Getenv("AGENTDESK_OIDC_CLIENT_SECRET"), Scopes: auth.SplitScopes(scopes)}
	if !slices.Contains(o.Scopes, "openid") {
		return auth.OIDC{}, usagef("--oidc-scopes must include openid, got %q", scopes)
	}
	for _, d := range strings.Split(domains, ",") {
		if d = strings.ToLower(strings.TrimSpace(strings.TrimPrefix(strings.TrimSpace(d), "@"))); d != "" {
			o.AllowedDomains = append(o.AllowedDomains, d)
		}
	}
	return o, nil
}

// userAdd invites a person to a project by email, as the local owner: the way to make
// the first owner before anyone signs in.
func userAdd(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("user add", &dataDir)
	project := fs.String("project", "", "project id")
	email := fs.String("email", "", "the person's email, as their provider gives it")
	role := fs.String("role", "", "owner, admin, member or viewer")
	if err := parse(fs, args); err != nil {
		return err
	}
	if err := errors.Join(required("project", *project), required("email", *email), required("role", *role)); err != nil {
		return usagef("%s", strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return withService(fs, dataDir, stderr, func(ctx context.Context, svc *service.Service) error {
		m, err := svc.AddMember(ctx, auth.Owner(*project), service.AddMemberInput{Email: *email, Role: *role})
		if err != nil {
			return err
		}
		return json.NewEncoder(stdout).Encode(m)
	})
}
