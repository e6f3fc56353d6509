package app

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/godbus/dbus/v5"
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
)

// Notifier sends notifications on the session bus and calls onClick with the path
// (a UI route such as /tasks/12) of the one clicked.
type Notifier struct {
	conn    *dbus.Conn
	onClick func(path string)
	signals chan *dbus.Signal

	mu    sync.Mutex
	paths map[uint32]string // notification id -> the route it opens
}

// NewNotifier connects to the session bus ($DBUS_SESSION_BUS_ADDRESS) and listens for
// clicks on the notifications it sends.
func NewNotifier(onClick func(path string)) (*Notifier, error) {
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		return nil, fmt.Errorf("notifications: no session bus: %w", err)
	}
	n := &Notifier{conn: conn, onClick: onClick, signals: make(chan *dbus.Signal, 64), paths: map[uint32]string{}}
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

// Send shows a notification; a click on it opens path in the window.
func (n *Notifier) Send(title, body, path string) error {
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
	call := n.conn.Object(notifyService, notifyPath).Call(notifyInterface+".Notify", 0,
		"agentdesk", uint32(0), "agentdesk", title, body, []string{notifyOpen, "Open"}, hints, int32(-1))
	if call.Err != nil {
		return fmt.Errorf("send notification: %w", call.Err)
	}
	var id uint32
	if err := call.Store(&id); err != nil {
		return fmt.Errorf("send notification: %w", err)
	}
	if path != "" {
		n.paths[id] = path
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

// listen turns ActionInvoked into onClick, and forgets closed notifications.
func (n *Notifier) listen() {
	for sig := range n.signals {
		if len(sig.Body) < 2 {
			continue
		}
		id, _ := sig.Body[0].(uint32)
		n.mu.Lock()
		path, ok := n.paths[id]
		if ok && sig.Name == notifyInterface+".NotificationClosed" {
			delete(n.paths, id)
		}
		n.mu.Unlock()
		if action, _ := sig.Body[1].(string); ok && sig.Name == notifyInterface+".ActionInvoked" && action == notifyOpen {
			n.onClick(path)
		}
	}
}

// Close disconnects from the bus.
func (n *Notifier) Close() {
	if n != nil {
		n.conn.Close()
	}
}
