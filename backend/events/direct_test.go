package events

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// socketFake stands for a socket the fan-out writes on without waiting: it takes at
// most room bytes a write (all when room < 0) and keeps what it took.
type socketFake struct {
	room int
	got  bytes.Buffer
}

func (s *socketFake) write(b []byte) int {
	n := len(b)
	if s.room >= 0 {
		n = min(n, s.room)
	}
	s.got.Write(b[:n])
	return n
}

// TestDeliverWritesIdleSocketsAtOnce: the fan-out writes an event's frame on an idle
// socket itself, nothing queued for its goroutine; on a socket being written, or whose
// goroutine has messages queued still, it queues, so that nothing overtakes them; what
// a full socket did not take goes to the goroutine, the frame's written part marked.
func TestDeliverWritesIdleSocketsAtOnce(t *testing.T) {
	pgtest.Engines(t, testDeliverWritesIdleSocketsAtOnce)
}

func testDeliverWritesIdleSocketsAtOnce(t *testing.T, engine string) {
	h := newHub(t, engine, Options{}, nil)
	ctx := context.Background()
	sub := subscribe(t, h, -1, auth.TaskRead)
	socket := &socketFake{room: -1}
	sub.writeDirect = socket.write // as Serve does once it follows live events

	commit(t, h, "task.created", "task.updated")
	h.deliver(ctx)
	if q := received(sub); len(q) != 0 {
		t.Fatalf("queued for the goroutine: %v, want nothing (the socket was idle)", q)
	}
	if seqs := frameSeqs(t, socket.got.Bytes()); !slices.Equal(seqs, []int64{1, 2}) || sub.last.Load() != 2 {
		t.Fatalf("written on the socket: %v (last %d), want [1 2]", seqs, sub.last.Load())
	}

	// The goroutine is writing: the fan-out does not wait for it, and queues.
	sub.out.Lock()
	commit(t, h, "task.updated")
	h.deliver(ctx)
	sub.out.Unlock()
	// Its message not taken yet: the next one queues behind it.
	commit(t, h, "task.updated")
	h.deliver(ctx)
	if q := received(sub); !slices.Equal(q, []int64{3, 4}) {
		t.Fatalf("queued: %v, want [3 4]", q)
	}
	sub.dealt += 2 // the goroutine wrote them
	socket.got.Reset()
	commit(t, h, "task.updated")
	h.deliver(ctx)
	if seqs := frameSeqs(t, socket.got.Bytes()); !slices.Equal(seqs, []int64{5}) || len(sub.C) != 0 {
		t.Fatalf("written on the socket: %v (%d queued), want [5] and none queued", seqs, len(sub.C))
	}

	// A socket that takes only part of the frame: the goroutine gets the rest.
	socket.got.Reset()
	socket.room = 10
	commit(t, h, "task.updated")
	h.deliver(ctx)
	var rest *Message
	select {
	case rest = <-sub.C:
	default:
		t.Fatal("nothing queued after a partial write")
	}
	if rest.Seq != 6 || rest.written != 10 || !bytes.Equal(socket.got.Bytes(), rest.Frame[:10]) {
		t.Fatalf("queued seq %d with %d bytes written, socket holds %q", rest.Seq, rest.written, socket.got.Bytes())
	}
	if sub.last.Load() != 5 {
		t.Errorf("last = %d, want 5: the client does not have event 6 whole yet", sub.last.Load())
	}
}

// frameSeqs reads the seqs of the events in a run of WebSocket text frames.
func frameSeqs(t *testing.T, b []byte) (seqs []int64) {
	t.Helper()
	for len(b) > 0 {
		if len(b) < 2 || b[0] != 0x81 {
			t.Fatalf("not a text frame: % x", b[:min(len(b), 4)])
		}
		n, head := int(b[1]), 2
		if n == 126 {
			n, head = int(binary.BigEndian.Uint16(b[2:])), 4
		}
		var e struct{ Seq int64 }
		if err := json.Unmarshal(b[head:head+n], &e); err != nil {
			t.Fatal(err)
		}
		seqs = append(seqs, e.Seq)
		b = b[head+n:]
	}
	return seqs
}

// TestTextFrame: the frames the fan-out writes are what a WebSocket client reads, at
// each length encoding.
func TestTextFrame(t *testing.T) {
	sizes := []int{0, 125, 126, 65535, 65536}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := Upgrader(nil).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		defer conn.Close()
		for _, n := range sizes {
			if _, err := conn.NetConn().Write(TextFrame(bytes.Repeat([]byte("x"), n))); err != nil {
				return
			}
		}
		conn.ReadMessage() // until the client closes
	}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	for _, n := range sizes {
		typ, got, err := conn.ReadMessage()
		if err != nil || typ != websocket.TextMessage || !bytes.Equal(got, bytes.Repeat([]byte("x"), n)) {
			t.Fatalf("%d bytes: read type %d, %d bytes, %v", n, typ, len(got), err)
		}
	}
}
