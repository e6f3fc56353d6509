package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/store"
	"github.com/agentdesk/agentdesk/backend/store/postgres"
)

// migrate copies the data directory's SQLite database into an empty PostgreSQL database
// (postgres.CopyFromSQLite): progress and a summary on stderr, the row counts as one JSON
// object on stdout. It reads a snapshot, so a server may keep running on the data
// directory, as for backup; what it writes after the snapshot is not copied.
func migrate(args []string, dataDir string, stdout, stderr io.Writer) error {
	fs := newFlags("migrate", &dataDir)
	to := fs.String("to", "", "the empty PostgreSQL database to copy into: postgres://USER:PASSWORD@HOST/DB "+
		"(the data directory's database is read as one snapshot, so a server may run meanwhile; stop it before the final move, "+
		"or its later writes stay behind)")
	if err := parse(fs, args); err != nil {
		return err
	}
	dbGiven := false
	fs.Visit(func(f *flag.Flag) { dbGiven = dbGiven || f.Name == "db" })
	if dbGiven {
		return usagef("migrate reads the SQLite database of the data directory (--data) and takes the PostgreSQL one as --to, not --db")
	}
	if err := required("to", *to); err != nil {
		return err
	}
	loc, err := store.ParseDB(*to)
	if err != nil || loc.Engine != store.Postgres {
		return usagef("--to takes a postgres://user:password@host/database URL")
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	from := server.DBPath(dataDir)
	fmt.Fprintf(stderr, "agentdesk: copying %s into %s\n", from, loc.Redacted())
	// Only big tables are worth lines (the store reports every 50,000 rows); the summary
	// covers the rest.
	big := map[string]bool{}
	progress := func(table string, rows int64, done bool) {
		switch {
		case !done:
			big[table] = true
			fmt.Fprintf(stderr, "agentdesk: %s: %d rows so far\n", table, rows)
		case big[table]:
			fmt.Fprintf(stderr, "agentdesk: %s: %d rows, done\n", table, rows)
		}
	}
	res, err := postgres.CopyFromSQLite(ctx, from, *to, progress)
	if err != nil {
		return errors.New(hidePassword("migrate: "+err.Error(), *to))
	}
	counts := make(map[string]int64, len(res.Tables))
	for _, t := range res.Tables {
		counts[t.Table] = t.Rows
	}
	fmt.Fprintf(stderr, "agentdesk: copied %d tables, %d rows into %s in %s\n",
		len(res.Tables), res.Rows, loc.Redacted(), res.Elapsed.Round(time.Millisecond))
	return printJSON(stdout, counts)
}

// hidePassword masks the URL's password in a message, should a driver ever quote it.
func hidePassword(msg, rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil || u.User == nil {
		return msg
	}
	if pw, ok := u.User.Password(); ok && len(pw) >= 3 {
		msg = strings.ReplaceAll(msg, pw, "xxxxx")
		msg = strings.ReplaceAll(msg, url.UserPassword("", pw).String()[1:], "xxxxx") // as written in the URL
	}
	return msg
}
