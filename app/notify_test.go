//go:build unix

package app

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"
)

// sessionBus starts a private D-Bus session bus for the test and points
// DBUS_SESSION_BUS_ADDRESS at it.
func sessionBus(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("dbus-daemon"); err != nil {
		if os.Getenv("AGENTDESK_REQUIRE_DBUS") != "" { // .ci/run sets it
			t.Fatal("dbus-daemon is missing: .ci/run installs it")
		}
		t.Skip("no dbus-daemon (apt-get install dbus-daemon)")
	}
	cmd := exec.Command("dbus-daemon", "--session", "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	addr, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		t.Fatalf("dbus-daemon's address: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", strings.TrimSpace(addr))
}

// fakeNotifications is a notification server as a desktop runs one: it records what it
// is asked to show, and can say the user clicked one.
type fakeNotifications struct {
	conn *dbus.Conn
	caps []string // what GetCapabilities answers
	mu   sync.Mutex
	got  []shown
	next uint32
	sent chan struct{}
}

type shown struct {
	id                 uint32
	app, summary, body string
	actions            []string
	hints              map[string]dbus.Variant
}

func (f *fakeNotifications) Notify(app string, replaces uint32, icon, summary, body string, actions []string, hints map[string]dbus.Variant, timeout int32) (uint32, *dbus.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.next++
	f.got = append(f.got, shown{f.next, app, summary, body, actions, hints})
	f.sent <- struct{}{}
	return f.next, nil
}

func (f *fakeNotifications) GetCapabilities() ([]string, *dbus.Error) {
	return f.caps, nil
}

func (f *fakeNotifications) click(t *testing.T, id uint32, action string) {
	if err := f.conn.Emit(notifyPath, notifyInterface+".ActionInvoked", id, action); err != nil {
		t.Fatal(err)
	}
}

func startFakeNotifications(t *testing.T, caps ...string) *fakeNotifications {
	t.Helper()
	conn, err := dbus.ConnectSessionBus()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	f := &fakeNotifications{conn: conn, caps: caps, sent: make(chan struct{}, 16)}
	if err := conn.Export(f, notifyPath, notifyInterface); err != nil {
		t.Fatal(err)
	}
	if reply, err := conn.RequestName(notifyService, dbus.NameFlagDoNotQueue); err != nil || reply != dbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("own %s: %v %v", notifyService, reply, err)
	}
	return f
}

// A notification reaches the desktop's notification server with an Open action, and a
// click on it (and only on it) opens its path in the window.
func TestNotifierSendsAndOpensOnClick(t *testing.T) {
	sessionBus(t)
	server := startFakeNotifications(t)
	opened := make(chan string, 4)
	n, err := NewNotifier(func(path string) { opened <- path }, func(Question, string) {})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()

	if err := n.Send("Waiting: deploy the site", "Which region?", "/tasks/12", nil); err != nil {
		t.Fatal(err)
	}
	if err := n.Send("Mentioned in Release", "@owner can you look?", "/conversations/3", nil); err != nil {
		t.Fatal(err)
	}
	server.mu.Lock()
	got := append([]shown(nil), server.got...)
	server.mu.Unlock()
	if len(got) != 2 || got[0].summary != "Waiting: deploy the site" || got[0].body != "Which region?" || got[0].app != "agentdesk" ||
		strings.Join(got[0].actions, ",") != "default,Open" || got[0].hints["desktop-entry"].Value() != "agentdesk" {
		t.Fatalf("the server was shown %+v", got)
	}

	// Another application's notification, and another action than a click: nothing
	// opens (signals arrive in order, so the next path opened is the next one clicked).
	server.click(t, 999, "default")
	server.click(t, got[0].id, "dismiss")
	for _, c := range []struct {
		id   uint32
		want string
	}{{got[1].id, "/conversations/3"}, {got[0].id, "/tasks/12"}} {
		server.click(t, c.id, "default")
		select {
		case p := <-opened:
			if p != c.want {
				t.Fatalf("a click opened %q, want %s", p, c.want)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("a click opened nothing")
		}
	}
}

// An agent's text reaches a server that renders body markup escaped, so "<a>" and
// "<img>" show as text instead of a link or an image loaded from anywhere; a server
// without markup gets the text as it is.
func TestNotifierEscapesMarkup(t *testing.T) {
	sessionBus(t)
	const agentText = `Approve? <a href="https://evil.example/">details</a> <img src="https://evil.example/t.png"> & more`
	for _, c := range []struct {
		caps []string
		want string
	}{
		{[]string{"body", "body-markup", "actions"},
			`Approve? &lt;a href="https://evil.example/"&gt;details&lt;/a&gt; &lt;img src="https://evil.example/t.png"&gt; &amp; more`},
		{[]string{"body", "actions"}, agentText},
	} {
		server := startFakeNotifications(t, c.caps...)
		n, err := NewNotifier(func(string) {}, func(Question, string) {})
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Send("Waiting: <b>deploy</b>", agentText, "/tasks/1", nil); err != nil {
			t.Fatal(err)
		}
		n.Close()
		server.mu.Lock()
		got := server.got
		server.mu.Unlock()
		if len(got) != 1 || got[0].body != c.want {
			t.Errorf("capabilities %v: the server was shown %+v, want body %q", c.caps, got, c.want)
		}
		server.conn.ReleaseName(notifyService)
		server.conn.Close()
	}
}

// Without a session bus, the binding says so rather than failing silently.
func TestNotifierWithoutBus(t *testing.T) {
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	if _, err := NewNotifier(func(string) {}, func(Question, string) {}); err == nil {
		t.Fatal("NewNotifier without a bus: no error")
	}
	var n *Notifier
	if err := n.Send("t", "b", "/inbox", nil); err == nil || !strings.Contains(err.Error(), "not available") {
		t.Fatalf("Send on no notifier: %v", err)
	}
}

// A question's options are buttons of its notification: pressing one answers with that
// option (onAnswer, with the task and the question's version); a click elsewhere opens
// the task; an action that names no option, or another notification, answers nothing.
func TestNotifierAnswersWithAnOption(t *testing.T) {
	sessionBus(t)
	server := startFakeNotifications(t)
	opened := make(chan string, 4)
	answered := make(chan string, 4)
	n, err := NewNotifier(func(path string) { opened <- path }, func(q Question, option string) {
		answered <- fmt.Sprintf("%s %d v%d %s", q.ProjectID, q.TaskID, q.WaitingVersion, option)
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Close()
	q := &Question{ProjectID: "prj_a", TaskID: 12, WaitingVersion: 3, Options: []string{"Approve", "Reject"}}
	if err := n.Send("Waiting: ship it?", "Ship it?", "/tasks/12", q); err != nil {
		t.Fatal(err)
	}
	server.mu.Lock()
	got := append([]shown(nil), server.got...)
	server.mu.Unlock()
	if len(got) != 1 || strings.Join(got[0].actions, ",") != "default,Open,answer:0,Approve,answer:1,Reject" {
		t.Fatalf("the server was shown %+v", got)
	}
	server.click(t, got[0].id, "answer:7")
	server.click(t, 999, "answer:0")
	server.click(t, got[0].id, "answer:1")
	server.click(t, got[0].id, "default")
	select {
	case a := <-answered:
		if a != "prj_a 12 v3 Reject" {
			t.Fatalf("answered %q, want Reject for task 12's question 3", a)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("pressing Reject answered nothing")
	}
	select {
	case p := <-opened:
		if p != "/tasks/12" {
			t.Fatalf("a click opened %q", p)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a click opened nothing")
	}
	if len(answered) != 0 {
		t.Fatalf("an action that names no option answered: %s", <-answered)
	}
}
