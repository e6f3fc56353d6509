package app

import (
	"crypto/subtle"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"sync"
)

// Session is what the window's JavaScript needs to call the API as the local owner: the
// desktop session token (send it as Authorization: Bearer on relative URLs, and as
// ?access_token= on the event stream) and the address of the server the same process
// runs on 127.0.0.1 (for ws://HOST/api/events).
type Session struct {
	Token     string `json:"token"`
	ServerURL string `json:"serverURL"`
}

// Desktop is bound into the window: its JavaScript calls
// window.go.app.Desktop.Session() and window.go.app.Desktop.Notify(...). Only the
// webview of this process can call a binding, which is what keeps the session token
// from other local processes. Every exported method of Desktop is callable from the
// window, so it has only these two.
type Desktop struct {
	session  Session
	notifier *Notifier // nil: no session bus, no notifications
}

// Session returns the window's credentials.
func (d *Desktop) Session() Session { return d.session }

// uiPath is a route of the UI a notification may open: a screen, and maybe an id.
var uiPath = regexp.MustCompile(`^/[a-z]+(/[0-9]+)?$`)

// Notify shows an operating system notification (the web Notification API does not
// work in the window); a click on it brings the window to the front on path, a route of
// the UI such as /tasks/12. The UI calls it when a task enters Waiting or a message
// mentions the person.
func (d *Desktop) Notify(title, body, path string) error {
	if !uiPath.MatchString(path) {
		return fmt.Errorf("notify: %q is not a route of the UI (such as /tasks/12)", path)
	}
	if strings.TrimSpace(title) == "" {
		return errors.New("notify: the title is empty")
	}
	return d.notifier.Send(title, body, path, nil)
}

// NotifyQuestion is Notify for a task that starts waiting with options: each option is
// a button of the notification, and pressing one answers the question (as the local
// owner, through the UI) unless it has moved on (waitingVersion). A click elsewhere
// opens the task.
func (d *Desktop) NotifyQuestion(title, body, projectID string, taskID, waitingVersion int64, options []string) error {
	if strings.TrimSpace(title) == "" {
		return errors.New("notify: the title is empty")
	}
	if projectID == "" || taskID <= 0 || len(options) == 0 || len(options) > 10 {
		return errors.New("notify: a question needs its project, its task and 1 to 10 options")
	}
	return d.notifier.Send(title, body, "/tasks/"+strconv.FormatInt(taskID, 10),
		&Question{ProjectID: projectID, TaskID: taskID, WaitingVersion: waitingVersion, Options: options})
}

// windowHandler is the handler the window's requests reach (everything that is not a
// built asset): the server's own. It logs once when the UI's first request signed in with
// the desktop session succeeds, "the window has loaded its data", and each refusal of
// the session, which would mean a window that cannot show anything.
func windowHandler(next http.Handler, token string) http.Handler {
	var once sync.Once
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !isSession(r, token) {
			next.ServeHTTP(w, r)
			return
		}
		sw := &statusWriter{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(sw, r)
		switch {
		case sw.status < 300:
			once.Do(func() {
				slog.Info("window signed in: the UI's first request with the desktop session succeeded",
					"method", r.Method, "path", r.URL.Path, "status", sw.status)
			})
		case sw.status == http.StatusUnauthorized || sw.status == http.StatusForbidden:
			slog.Warn("window request refused", "method", r.Method, "path", r.URL.Path, "status", sw.status)
		}
	})
}

// isSession tells whether r carries the desktop session token (compared in constant time).
func isSession(r *http.Request, token string) bool {
	h := r.Header.Get("Authorization")
	if len(h) < 7 || !strings.EqualFold(h[:7], "bearer ") {
		return false
	}
	return subtle.ConstantTimeCompare([]byte(strings.TrimSpace(h[7:])), []byte(token)) == 1
}

// statusWriter records the status a handler answered with.
type statusWriter struct {
	http.ResponseWriter
	status      int
	wroteHeader bool
}

func (s *statusWriter) WriteHeader(code int) {
	if !s.wroteHeader {
		s.status, s.wroteHeader = code, true
	}
	s.ResponseWriter.WriteHeader(code)
}

func (s *statusWriter) Write(b []byte) (int, error) {
	s.wroteHeader = true
	return s.ResponseWriter.Write(b)
}

// Flush passes on to the webview's writer when it can flush (gin's Flush assumes it can).
func (s *statusWriter) Flush() {
	if f, ok := s.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the webview's writer.
func (s *statusWriter) Unwrap() http.ResponseWriter { return s.ResponseWriter }
