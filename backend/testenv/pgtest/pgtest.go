// Package pgtest gives tests a real PostgreSQL: a fresh, empty database per test, on a
// throwaway cluster that the test binary starts itself (initdb and postgres in a
// temporary directory, on a free loopback port, as an unprivileged user when run as
// root), or on the server named by AGENTDESK_TEST_POSTGRES (a URL of a role that may
// create databases).
//
// When there is no PostgreSQL, tests skip with the reason, except when CI is set or
// AGENTDESK_REQUIRE_POSTGRES=1: then they fail, so that nothing skips silently in CI.
//
// One cluster serves the whole test binary; call Main from TestMain so that it is
// stopped (and its directory removed) when the tests end. The postgres process also
// gets SIGQUIT if the test binary dies, so a killed run leaves no server behind.
package pgtest

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver
)

// EnvURL names a server to use instead of starting one.
const EnvURL = "AGENTDESK_TEST_POSTGRES"

var (
	once    sync.Once
	shared  *cluster
	openErr error
)

// cluster is a PostgreSQL server where tests create their databases.
type cluster struct {
	admin   *url.URL // a role that may create databases, on its maintenance database
	dir     string   // our temporary directory; "" for AGENTDESK_TEST_POSTGRES
	proc    *exec.Cmd
	exited  chan struct{}
	started time.Duration // how long the start took
}

// Main runs the tests and then stops the cluster they started, if any. Use it as
// TestMain(m) { pgtest.Main(m) } in packages that call DB.
func Main(m *testing.M) {
	code := m.Run()
	Stop()
	os.Exit(code)
}

// Stop stops the cluster this binary started (if it did) and removes its directory.
func Stop() {
	if shared != nil {
		shared.stop()
	}
}

// Required reports whether a missing PostgreSQL fails the tests instead of skipping them.
func Required() bool {
	return os.Getenv("CI") != "" || os.Getenv("AGENTDESK_REQUIRE_POSTGRES") == "1"
}

// DB returns the URL of a new, empty database for the test, dropped when the test ends.
// Without a PostgreSQL the test is skipped (or fails, see Required).
func DB(t testing.TB) string {
	t.Helper()
	c, err := server()
	if err != nil {
		if Required() {
			t.Fatalf("PostgreSQL is required here (CI or AGENTDESK_REQUIRE_POSTGRES=1) but not available: %v", err)
		}
		t.Skipf("no PostgreSQL for this test (set %s or install postgresql): %v", EnvURL, err)
	}
	var b [6]byte
	rand.Read(b[:])
	name := "agentdesk_test_" + hex.EncodeToString(b[:])
	if err := c.exec(context.Background(), "CREATE DATABASE "+name); err != nil {
		t.Fatalf("create test database: %v", err)
	}
	t.Cleanup(func() {
		// FORCE: a test that forgot to close a pool must not leave its database behind.
		if err := c.exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
			t.Errorf("drop test database %s: %v", name, err)
		}
	})
	return c.url(name)
}

// Migrated returns the URL of a database with the current schema and no rows, for the
// test: one that an earlier test of this binary used and that was emptied since, or a new
// one (DB) that prepare migrates. When the test ends the database is emptied (TRUNCATE
// of every table but goose's, identities restarted) and kept for the next test; if a
// connection to it is still open, or emptying it fails, it is dropped instead. Creating
// and migrating a database takes a second or two here, emptying one a few tens of
// milliseconds: the tests that run on both engines start many servers.
func Migrated(t testing.TB, prepare func(url string) error) string {
	t.Helper()
	c, err := server()
	if err != nil {
		DB(t) // skips or fails with the reason
	}
	poolMu.Lock()
	var name string
	if n := len(pool); n > 0 {
		name, pool = pool[n-1], pool[:n-1]
	}
	poolMu.Unlock()
	if name == "" {
		var b [6]byte
		rand.Read(b[:])
		name = "agentdesk_test_" + hex.EncodeToString(b[:])
		if err := c.exec(context.Background(), "CREATE DATABASE "+name); err != nil {
			t.Fatalf("create test database: %v", err)
		}
		if err := prepare(c.url(name)); err != nil {
			c.exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			t.Fatalf("prepare test database: %v", err)
		}
	}
	t.Cleanup(func() {
		if err := c.empty(context.Background(), name); err != nil {
			if err := c.exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)"); err != nil {
				t.Errorf("drop test database %s: %v", name, err)
			}
			return
		}
		poolMu.Lock()
		pool = append(pool, name)
		poolMu.Unlock()
	})
	return c.url(name)
}

var (
	poolMu sync.Mutex
	pool   []string // emptied databases, for Migrated
)

// url is the URL of the cluster's database name.
func (c *cluster) url(name string) string {
	u := *c.admin
	u.Path = "/" + name
	return u.String()
}

// empty deletes every row of the database name, unless another connection uses it.
func (c *cluster) empty(ctx context.Context, name string) error {
	db, err := sql.Open("pgx", c.url(name))
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	// A closed pool's server processes end a moment after its connections close.
	for waited := 0; ; waited++ {
		var others int
		if err := db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&others); err != nil {
			return err
		}
		if others == 0 {
			break
		}
		if waited == 100 {
			return fmt.Errorf("%d connections still open", others)
		}
		time.Sleep(20 * time.Millisecond)
	}
	_, err = db.ExecContext(ctx, `SET lock_timeout = '5s';
		DO $$ DECLARE tables text; BEGIN
			SELECT string_agg(quote_ident(tablename), ', ') INTO tables FROM pg_tables
			WHERE schemaname = 'public' AND tablename <> 'goose_db_version';
			IF tables IS NOT NULL THEN EXECUTE 'TRUNCATE ' || tables || ' RESTART IDENTITY CASCADE'; END IF;
		END $$`)
	return err
}

// StartTime is how long this binary's cluster took to start (initdb and the first
// accepted connection); 0 when AGENTDESK_TEST_POSTGRES was used or none started.
func StartTime() time.Duration {
	if shared == nil {
		return 0
	}
	return shared.started
}

func server() (*cluster, error) {
	once.Do(func() {
		if raw := os.Getenv(EnvURL); raw != "" {
			shared, openErr = external(raw)
		} else {
			shared, openErr = start()
		}
		if openErr != nil {
			shared = nil
		}
	})
	return shared, openErr
}

func external(raw string) (*cluster, error) {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "postgres" && u.Scheme != "postgresql") {
		return nil, fmt.Errorf("%s=%q is not a postgres:// URL", EnvURL, raw)
	}
	c := &cluster{admin: u}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := c.exec(ctx, "SELECT 1"); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvURL, err)
	}
	return c, nil
}

// binDir finds PostgreSQL's programs: on the PATH, or Debian's /usr/lib/postgresql/N/bin
// (the newest), which is not on the PATH.
func binDir() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		return filepath.Dir(p), nil
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin/initdb")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if len(dirs) == 0 {
		return "", errors.New("initdb not found on the PATH nor in /usr/lib/postgresql/*/bin")
	}
	return filepath.Dir(dirs[0]), nil
}

func version(initdb string) int {
	n, _ := strconv.Atoi(filepath.Base(filepath.Dir(filepath.Dir(initdb))))
	return n
}

// runAs is the credential the cluster runs with: PostgreSQL refuses to run as root.
func runAs() (*syscall.Credential, error) {
	if os.Geteuid() != 0 {
		return nil, nil
	}
	for _, name := range []string{"postgres", "nobody"} {
		u, err := user.Lookup(name)
		if err != nil {
			continue
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		return &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}, nil
	}
	return nil, errors.New("running as root and there is no postgres or nobody user to run PostgreSQL as")
}

func start() (*cluster, error) {
	began := time.Now()
	bin, err := binDir()
	if err != nil {
		return nil, err
	}
	cred, err := runAs()
	if err != nil {
		return nil, err
	}
	// Under /tmp rather than $TMPDIR when root: the unprivileged user must reach it.
	parent := ""
	if cred != nil {
		parent = "/tmp"
	}
	dir, err := os.MkdirTemp(parent, "agentdesk-pg-")
	if err != nil {
		return nil, err
	}
	c := &cluster{dir: dir}
	if cred != nil {
		if err := os.Chown(dir, int(cred.Uid), int(cred.Gid)); err != nil {
			c.stop()
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	env := append(os.Environ(), "LC_ALL=C", "LANG=C")
	// Locale C: text sorts by its bytes, as SQLite's BINARY collation does.
	initdb := exec.Command(filepath.Join(bin, "initdb"), "-D", data, "-U", "agentdesk",
		"--auth=trust", "-E", "UTF8", "--locale=C")
	initdb.Env = env
	initdb.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	if out, err := initdb.CombinedOutput(); err != nil {
		c.stop()
		return nil, fmt.Errorf("initdb: %v: %s", err, lastLines(out))
	}
	// A port found free may be taken before postgres binds it (another test binary
	// starting its own cluster): postgres then exits, and we try another port.
	for attempt := 1; ; attempt++ {
		err := c.launch(bin, data, env, cred)
		if err == nil {
			break
		}
		if !errors.Is(err, errExited) || attempt == 3 {
			c.stop()
			return nil, err
		}
	}
	c.started = time.Since(began)
	return c, nil
}

var errExited = errors.New("postgres exited")

// launch starts postgres on a free port and waits until it accepts connections.
func (c *cluster) launch(bin, data string, env []string, cred *syscall.Credential) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	logf, err := os.Create(filepath.Join(c.dir, "postgres.log"))
	if err != nil {
		return err
	}
	defer logf.Close()
	// The postgres process is our child (not pg_ctl's daemon), so that it dies with the
	// test binary (Pdeathsig). fsync and synchronous_commit keep their defaults (on).
	proc := exec.Command(filepath.Join(bin, "postgres"), "-D", data,
		"-p", strconv.Itoa(port), "-k", c.dir, "-c", "listen_addresses=127.0.0.1",
		"-c", "max_connections=200")
	proc.Env = env
	proc.Stdout, proc.Stderr = logf, logf
	proc.SysProcAttr = &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT, Setpgid: true}
	if err := proc.Start(); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}
	exited := make(chan struct{})
	go func() { proc.Wait(); close(exited) }()
	c.admin = &url.URL{Scheme: "postgres", User: url.User("agentdesk"),
		Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Path: "/postgres",
		RawQuery: "sslmode=disable"}
	// Ready when it answers, and it is ours: another cluster that took the port first
	// would answer too (with the same trusted user), from another data directory.
	deadline := time.Now().Add(60 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		err = c.exec(ctx, "DO $$ BEGIN IF current_setting('data_directory') <> '"+data+"' THEN RAISE 'another cluster on this port'; END IF; END $$")
		cancel()
		if err == nil {
			c.proc, c.exited = proc, exited
			return nil
		}
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(c.dir, "postgres.log"))
			return fmt.Errorf("%w: %s", errExited, lastLines(log))
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			proc.Process.Kill()
			<-exited
			return fmt.Errorf("postgres did not accept connections within 60 s: %v", err)
		}
	}
}

func (c *cluster) exec(ctx context.Context, query string) error {
	db, err := sql.Open("pgx", c.admin.String())
	if err != nil {
		return err
	}
	defer db.Close()
	_, err = db.ExecContext(ctx, query)
	return err
}

func (c *cluster) stop() {
	if c.proc != nil {
		c.proc.Process.Signal(syscall.SIGINT) // fast shutdown
		select {
		case <-c.exited:
		case <-time.After(30 * time.Second):
			c.proc.Process.Kill()
			<-c.exited
		}
		c.proc = nil
	}
	if c.dir != "" {
		os.RemoveAll(c.dir)
		c.dir = ""
	}
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

func lastLines(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) > 15 {
		lines = lines[len(lines)-15:]
	}
	return strings.Join(lines, "\n")
}

// Engines runs test once per store engine, as the subtests "sqlite" and "postgres",
// with engine set to that name: the same test, not a copy, runs on both. The test gets
// its databases from DBFor (testenv.StartOn does). Without a PostgreSQL the postgres
// subtest skips (or fails, see Required).
func Engines(t *testing.T, test func(t *testing.T, engine string)) {
	t.Helper()
	for _, engine := range []string{"sqlite", "postgres"} {
		t.Run(engine, func(t *testing.T) {
			if engine == "postgres" {
				if _, err := server(); err != nil {
					DB(t) // skips or fails with the reason
				}
			}
			test(t, engine)
		})
	}
}

// DBFor is the --db value of a database of the engine for the test: "" for SQLite (a
// file in the data directory); for PostgreSQL, a new empty database (DB), or with
// prepare (which migrates a new database) an emptied one (Migrated).
func DBFor(t testing.TB, engine string, prepare func(url string) error) string {
	t.Helper()
	switch engine {
	case "sqlite":
		return ""
	case "postgres":
		if prepare == nil {
			return DB(t)
		}
		return Migrated(t, prepare)
	}
	t.Fatalf("unknown engine %q", engine)
	return ""
}
