package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/godbus/dbus/v5"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
)

// The desktop notifications go through the freedesktop notification service on the
// session bus (org.freedesktop.Notifications, what GNOME, KDE, XFCE and dunst serve):
// the window's WebKitGTK webview grants the web Notification API nothing under Wails, so
// the UI asks the Desktop binding (Notify) instead, and a click on a notification opens
// the task or conversation it is about.
const (
	notifyService   = "org.freedesktop.Notifications"
	notifyPath      = dbus.ObjectPath("/org/freedesktop/Notifications")
	notifyInterface = "org.freedesktop.Notifications"
	// notifyOpen is the default action: a click on the notification's body.
	notifyOpen = "default"
	// notifyAnswer prefixes the action of a question's option: "answer:0" is the first.
	notifyAnswer = "answer:"
)

// Question is what a notification about a Waiting task needs to answer it with one of
// its options (Notifier.Send's actions).
type Question struct {
	ProjectID      string
	TaskID         int64
	WaitingVersion int64 // the question the options answer: a later one refuses them
	Options        []string
}

// Notifier sends notifications on the session bus and calls onClick with the path
// (a UI route such as /tasks/12) of the one clicked, and onAnswer with the question and
// option of an option's button.
type Notifier struct {
	conn     *dbus.Conn
	onClick  func(path string)
	onAnswer func(q Question, option string)
	signals  chan *dbus.Signal

	mu    sync.Mutex
	shown map[uint32]shownNote // notification id -> what it opens and answers
}

type shownNote struct {
	path     string
	question *Question
}

// NewNotifier connects to the session bus ($DBUS_SESSION_BUS_ADDRESS) and listens for
// clicks on the notifications it sends.
func NewNotifier(onClick func(path string), onAnswer func(q Question, option string)) (*Notifier, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("notifications: no session bus: %w", err)
	}
	n := &Notifier{conn: conn, onClick: onClick, onAnswer: onAnswer, signals: make(chan *dbus.Signal, 64), shown: map[uint32]shownNote{}}
	for _, member := range []string{"ActionInvoked", "NotificationClosed"} {
		if err := conn.AddMatchSignal(dbus.WithMatchInterface(notifyInterface), dbus.WithMatchMember(member), dbus.WithMatchObjectPath(notifyPath)); err != nil {
			conn.Close()
			return nil, fmt.Errorf("notifications: listen for %s: %w", member, err)
		}
	}
	conn.Signal(n.signals)
	go n.listen()
	return n, nil
}

// Send shows a notification; a click on it opens path in the window. With a question,
// each of its options is a button that answers it (onAnswer).
func (n *Notifier) Send(title, body, path string, q *Question) error {
	if n == nil {
		return errors.New("notifications are not available: no session bus")
	}
	hints := map[string]dbus.Variant{"desktop-entry": dbus.MakeVariant("agentdesk")}
	if n.bodyMarkup() {
		body = markupEscaper.Replace(body)
	}
	// The id is recorded under the lock the signal handler takes, so a click that comes
	// before Notify's answer is read still finds its path.
	n.mu.Lock()
	defer n.mu.Unlock()
	actions := []string{notifyOpen, "Open"}
	if q != nil {
		for i, option := range q.Options {
			actions = append(actions, notifyAnswer+strconv.Itoa(i), option)
		}
	}
	call := n.conn.Object(notifyService, notifyPath).Call(notifyInterface+".Notify", 0,
		"agentdesk", uint32(0), "agentdesk", title, body, actions, hints, int32(-1))
	if call.Err != nil {
		return fmt.Errorf("send notification: %w", call.Err)
	}
	var id uint32
	if err := call.Store(&id); err != nil {
		return fmt.Errorf("send notification: %w", err)
	}
	if path != "" || q != nil {
		n.shown[id] = shownNote{path: path, question: q}
	}
	return nil
}

// markupEscaper makes text safe in a notification body that the server reads as markup
// (the spec's subset of HTML: <a>, <img>, <b>...): an agent's words must not become a link
// or an image fetched from anywhere.
var markupEscaper = strings.NewReplacer("&", "&amp;", "<", "&lt;", ">", "&gt;")

// bodyMarkup says whether the notification server may read a body as markup: unless it
// answers GetCapabilities without "body-markup", assume it does, so the body is escaped.
func (n *Notifier) bodyMarkup() bool {
	var caps []string
	if err := n.conn.Object(notifyService, notifyPath).Call(notifyInterface+".GetCapabilities", 0).Store(&caps); err != nil {
		return true
	}
	return slices.Contains(caps, "body-markup")
}

// listen turns ActionInvoked into onClick or onAnswer, and forgets closed notifications.
func (n *Notifier) listen() {
	for sig := range n.signals {
		if len(sig.Body) < 2 {
			continue
		}
		id, _ := sig.Body[0].(uint32)
		n.mu.Lock()
		note, ok := n.shown[id]
		if ok && sig.Name == notifyInterface+".NotificationClosed" {
			delete(n.shown, id)
		}
		n.mu.Unlock()
		action, _ := sig.Body[1].(string)
		if !ok || sig.Name != notifyInterface+".ActionInvoked" {
			continue
		}
		if action == notifyOpen && note.path != "" {
			n.onClick(note.path)
		}
		if i, err := strconv.Atoi(strings.TrimPrefix(action, notifyAnswer)); err == nil && strings.HasPrefix(action, notifyAnswer) &&
			note.question != nil && i >= 0 && i < len(note.question.Options) {
			n.onAnswer(*note.question, note.question.Options[i])
		}
	}
}

// Close disconnects from the bus.
func (n *Notifier) Close() {
	if n != nil {
		n.conn.Close()
	}
}

// answerFromNotification answers q with option, as the local owner through the UI (the
// notification is the window's): the same Respond as the Inbox's buttons, so a question
// that has moved on (another waiting_version, or answered) refuses it, and the log says so.
func answerFromNotification(svc *service.Service, q Question, option string) {
	owner := auth.Owner(q.ProjectID)
	owner.Via = audit.ViaUI
	version := q.WaitingVersion
	_, err := svc.Respond(context.Background(), owner, q.TaskID, service.RespondInput{Choice: &option, WaitingVersion: &version}, "", nil)
	if err != nil {
		slog.Warn("answer from a notification", "task", q.TaskID, "option", option, "err", err)
		return
	}
	slog.Info("answered from a notification", "task", q.TaskID, "option", option)
}
