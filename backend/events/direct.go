package events

import (
	"encoding/binary"
	"runtime"
	"sync"
)

// Direct writes. A live event used to reach each of a project's sockets through that
// socket's goroutine: a channel send, a wake-up, a select and a write, a thousand times
// per event for a thousand subscribers, each goroutine queued for a core behind the
// others (the scheduler's delay was most of the fan-out's time: docs/performance.md).
// Now the fan-out writes the event's frame itself on every socket that is idle (its
// goroutine is not writing and has nothing queued), with a write that never waits: the
// kernel takes the frame whole, or part of it, or none when the socket's buffer is
// full. What it does not take goes through the socket's goroutine as before, which may
// wait for the client, and gives it up when it stops reading (writeTimeout).
//
// The subscriber's out lock orders the two: whoever writes on the socket holds it, and
// the fan-out only tries it (TryLock), so it never waits for a socket either.

// TextFrame is a WebSocket text message of one unmasked frame, as a server sends it
// (RFC 6455 5.2), without compression (the upgrader offers none).
func TextFrame(payload []byte) []byte {
	var head []byte
	switch n := len(payload); {
	case n < 126:
		head = []byte{0x81, byte(n)}
	case n <= 0xffff:
		head = binary.BigEndian.AppendUint16([]byte{0x81, 126}, uint16(n))
	default:
		head = binary.BigEndian.AppendUint64([]byte{0x81, 127}, uint64(n))
	}
	return append(head, payload...)
}

// writeNowFunc writes what it can of b on a socket without waiting and says how many
// bytes the kernel took (0 when the socket's buffer is full, or on any error: the
// socket's goroutine then writes, and meets the error itself).
type writeNowFunc func(b []byte) int

// writeEach writes m on each of subs' sockets that is idle (writeNow), spread over
// the cores: a write is a system call of a few µs, and a thousand of them in one
// goroutine would take one core for milliseconds while the other waits. It returns how
// many of m's frame's bytes went on each socket (0: none, or not tried).
func writeEach(subs []*Subscriber, m *Message) []int {
	written := make([]int, len(subs))
	if m.Frame == nil {
		return written
	}
	workers := min(runtime.GOMAXPROCS(0), (len(subs)+minPerWriter-1)/minPerWriter)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := w; i < len(subs); i += workers {
				written[i] = subs[i].writeNow(m)
			}
		})
	}
	wg.Wait()
	return written
}

// minPerWriter is how many sockets are worth a goroutine of writeEach.
const minPerWriter = 64

// writeNow writes m on sub's socket if it is idle: its goroutine is not writing, has
// written every message handed to it, and its socket is open. It reports how many of
// m's frame's bytes went (all of them for a message the client already has; 0 when
// the socket was not idle). Called by the fan-out with h.mu held.
func (sub *Subscriber) writeNow(m *Message) int {
	if !sub.out.TryLock() {
		return 0
	}
	defer sub.out.Unlock()
	if sub.writeDirect == nil || sub.dealt != sub.queued {
		return 0
	}
	if m.Seq <= sub.Skip {
		return len(m.Frame)
	}
	n := sub.writeDirect(m.Frame)
	if n == len(m.Frame) {
		sub.last.Store(m.Seq)
	}
	return n
}

// rest is m but for its frame's first n bytes, written already: what the socket's
// goroutine must write before anything else.
func (m *Message) rest(n int) *Message {
	return &Message{Seq: m.Seq, Type: m.Type, JSON: m.JSON, Frame: m.Frame, written: n}
}
