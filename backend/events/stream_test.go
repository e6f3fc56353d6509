package events_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// smallBufferDialer dials with a tiny socket receive buffer, so that a client that
// stops reading makes the server's writes block soon.
func smallBufferDialer() *websocket.Dialer {
	nd := &net.Dialer{Control: func(_, _ string, c syscall.RawConn) error {
		var serr error
		err := c.Control(func(fd uintptr) {
			serr = syscall.SetsockoptInt(int(fd), syscall.SOL_SOCKET, syscall.SO_RCVBUF, 4096)
		})
		return errors.Join(err, serr)
	}}
	return &websocket.Dialer{NetDialContext: nd.DialContext, ReadBufferSize: 1024, HandshakeTimeout: 10 * time.Second}
}

func streamURL(env *testenv.Env, query string) string {
	return strings.Replace(env.URL, "http://", "ws://", 1) + "/api/events" + query
}

// waitFor polls cond until it holds, failing after a generous bound.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(30 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
	}
}

// readAll reads events until the stream ends; it returns the last seq and the error
// that ended it.
func readAll(t *testing.T, conn *websocket.Conn) (count int, last int64, err error) {
	t.Helper()
	conn.SetReadDeadline(time.Now().Add(60 * time.Second))
	for {
		var e struct{ Seq int64 }
		if err = conn.ReadJSON(&e); err != nil {
			return count, last, err
		}
		count++
		last = e.Seq
	}
}

// TestStalledClientGetsCloseFrame: a client that stops reading until the server gives
// up on it (its write timed out) still finds, once it reads again, every message the
// server started, then a close frame 4008 naming the since to resume from: never a
// bare drop (1006).
func TestStalledClientGetsCloseFrame(t *testing.T) {
	pgtest.Engines(t, testStalledClientGetsCloseFrame)
}

func testStalledClientGetsCloseFrame(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	hub := env.Server.Hub
	events.SetWriteTimeout(hub, 300*time.Millisecond)
	tok := env.Token(t, env.Project.ID, "task:read", "task:write")
	conn, _, err := smallBufferDialer().Dial(streamURL(env, ""), http.Header{"Authorization": {"Bearer " + tok}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()

	// The client reads nothing while big events are written, until the server gives
	// up on it. Far fewer events than the hub buffers are written: it is the write
	// timeout that gives up, not the hub's buffer.
	details := strings.Repeat("x", 60_000)
	created := 0
	for hub.Subscribers(env.Project.ID) > 0 {
		if created == 500 {
			t.Fatal("the server never gave up on a client that stopped reading")
		}
		r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok,
			Body: fmt.Sprintf(`{"summary":"big %d","details":%q}`, created, details)})
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
		created++
	}

	count, last, err := readAll(t, conn)
	var ce *websocket.CloseError
	if !errors.As(err, &ce) || ce.Code != events.CloseSlowConsumer {
		t.Fatalf("after %d of %d events the stream ended with %v; want close code 4008", count, created, err)
	}
	if want := fmt.Sprintf("since=%d", last); !strings.HasSuffix(ce.Text, want) {
		t.Fatalf("close reason %q; the last event received was seq %d: want it to end with %q", ce.Text, last, want)
	}
	if count == 0 || count >= created {
		t.Fatalf("the client got %d of %d events: it should have been dropped part way", count, created)
	}
}

// TestLateReaderGetsEveryEventWhole: a client that reads late, on a socket with little
// room, so that the fan-out's writes fill it and leave frames half written for the
// socket's goroutine to finish, still reads every event whole, in order, once.
func TestLateReaderGetsEveryEventWhole(t *testing.T) {
	pgtest.Engines(t, testLateReaderGetsEveryEventWhole)
}

func testLateReaderGetsEveryEventWhole(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, "task:read", "task:write")
	conn, _, err := smallBufferDialer().Dial(streamURL(env, ""), http.Header{"Authorization": {"Bearer " + tok}})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	waitFor(t, "the subscriber", func() bool { return env.Server.Hub.Subscribers(env.Project.ID) == 1 })
	const n = 60 // 3 MB: more than the server's socket buffers hold
	details := strings.Repeat("x", 50_000)
	for i := range n {
		r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok,
			Body: fmt.Sprintf(`{"summary":"late %d","details":%q}`, i, details)})
		if r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var prev int64
	for i := range n {
		var e struct {
			Seq  int64
			Data struct{ Summary, Details string }
		}
		if err := conn.ReadJSON(&e); err != nil {
			t.Fatalf("event %d of %d: %v", i+1, n, err)
		}
		if want := fmt.Sprintf("late %d", i); e.Data.Summary != want || e.Data.Details != details || (prev != 0 && e.Seq != prev+1) {
			t.Fatalf("event %d: seq %d after %d, summary %q (want %q), %d bytes of details", i+1, e.Seq, prev, e.Data.Summary, want, len(e.Data.Details))
		}
		prev = e.Seq
	}
}

// TestReplaysWaitTheirTurn: when every replay slot is taken, a ?since= stream is
// connected and waits; live-only streams are not held up; once a slot frees, the
// waiting stream gets every event after its since, those committed while it waited
// included, in order and once.
func TestReplaysWaitTheirTurn(t *testing.T) { pgtest.Engines(t, testReplaysWaitTheirTurn) }

func testReplaysWaitTheirTurn(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	tok := env.Token(t, env.Project.ID, "task:read", "task:write")
	create := func(name string) {
		t.Helper()
		if r := env.Do(t, testenv.Request{Method: "POST", Path: "/api/tasks", Token: tok, Body: fmt.Sprintf(`{"summary":%q}`, name)}); r.Status != 201 {
			t.Fatalf("create: %d %s", r.Status, r.Body)
		}
	}
	dial := func(query string) *websocket.Conn {
		t.Helper()
		conn, _, err := websocket.DefaultDialer.Dial(streamURL(env, query), http.Header{"Authorization": {"Bearer " + tok}})
		if err != nil {
			t.Fatalf("dial %s: %v", query, err)
		}
		t.Cleanup(func() { conn.Close() })
		return conn
	}
	type event struct {
		Seq  int64
		Type string
		Data struct{ Summary string }
	}
	read := func(conn *websocket.Conn) event {
		t.Helper()
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		var e event
		if err := conn.ReadJSON(&e); err != nil {
			t.Fatalf("read: %v", err)
		}
		return e
	}

	create("before 1")
	create("before 2")
	release := events.HoldReplaySlots(env.Server.Hub)
	released := false
	defer func() {
		if !released {
			release()
		}
	}()
	waiting := dial("?since=0") // the handshake completes; the replay waits
	live := dial("")
	create("while waiting")
	if e := read(live); e.Type != "task.created" || e.Data.Summary != "while waiting" {
		t.Fatalf("live stream got %+v", e)
	}
	// Held: only the live stream follows the project; the replay has not started.
	if n := env.Server.Hub.Subscribers(env.Project.ID); n != 1 {
		t.Fatalf("%d subscribers while the replay waits, want 1 (the live stream)", n)
	}
	release()
	released = true
	var got []string
	var last int64
	for len(got) < 3 {
		e := read(waiting)
		if e.Seq <= last {
			t.Fatalf("seq %d after %d", e.Seq, last)
		}
		last = e.Seq
		if e.Type == "task.created" {
			got = append(got, e.Data.Summary)
		}
	}
	if want := []string{"before 1", "before 2", "while waiting"}; strings.Join(got, "|") != strings.Join(want, "|") {
		t.Fatalf("the waiting replay got %q, want %q", got, want)
	}
}
