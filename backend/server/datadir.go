package server

import (
	"errors"
	"io/fs"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// IsNewDatabase reports whether dataDir holds no database yet: opening it will create one.
func IsNewDatabase(dataDir string) bool {
	_, err := os.Stat(DBPath(dataDir))
	return errors.Is(err, fs.ErrNotExist)
}

// NewDatabaseNote is the line that says a command or server created a new database,
// and where, so that a mistyped data directory is noticed.
func NewDatabaseNote(dataDir string) string {
	path := DBPath(dataDir)
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	return "agentdesk: created a new, empty database at " + path + " (if you expected your data, check --data or AGENTDESK_DATA)"
}

// URLFile is the file in the data directory where a running server writes the URL it
// answers at, then its pid, so that CLI commands (agent env) default to it. Written
// 0600 once the server listens, removed when it stops cleanly; after a crash it stays,
// and RunningURL ignores it because its pid is gone.
const URLFile = "server.url"

// NoteURL writes URLFile for a server listening at listenURL (agentURL says which URL),
// for --serve and the desktop window; ForgetURL removes it on a clean stop.
func NoteURL(dataDir, publicURL, listenURL string) error {
	return writeURLFile(dataDir, agentURL(publicURL, listenURL))
}

// ForgetURL removes URLFile if this process wrote it.
func ForgetURL(dataDir string) { removeURLFile(dataDir) }

// writeURLFile notes u and this process's pid in dataDir.
func writeURLFile(dataDir, u string) error {
	note := u + "\n" + strconv.Itoa(os.Getpid()) + "\n"
	return os.WriteFile(filepath.Join(dataDir, URLFile), []byte(note), 0o600)
}

// removeURLFile removes the note, if it is still this process's.
func removeURLFile(dataDir string) {
	if _, pid := readURLFile(dataDir); pid == os.Getpid() {
		os.Remove(filepath.Join(dataDir, URLFile))
	}
}

func readURLFile(dataDir string) (string, int) {
	b, err := os.ReadFile(filepath.Join(dataDir, URLFile))
	if err != nil {
		return "", 0
	}
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) < 2 {
		return "", 0
	}
	pid, _ := strconv.Atoi(strings.TrimSpace(lines[1]))
	return strings.TrimSpace(lines[0]), pid
}

// RunningURL is the URL of the server running on dataDir, "" when none is: no note, or
// a note left by a process that is gone (a crash, a kill -9).
func RunningURL(dataDir string) string {
	u, pid := readURLFile(dataDir)
	if u == "" || pid <= 0 || !processAlive(pid) {
		return ""
	}
	return u
}

// agentURL is the URL to note for a server listening at listenURL: the public URL when
// there is one (what agents elsewhere reach), else the listener's, with an unspecified
// host (0.0.0.0, ::) made loopback, which the agents of this machine reach.
func agentURL(publicURL, listenURL string) string {
	if publicURL != "" {
		return strings.TrimSuffix(publicURL, "/")
	}
	u, err := url.Parse(listenURL)
	if err != nil {
		return listenURL
	}
	host, port, err := net.SplitHostPort(u.Host)
	if err != nil {
		return listenURL
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			host = "127.0.0.1"
		} else {
			host = "::1"
		}
	}
	u.Host = net.JoinHostPort(host, port)
	return u.String()
}
