package events

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
)

// Keepalive and limits of a stream connection.
const (
	pingEvery = 25 * time.Second
	pongWait  = 60 * time.Second
	// writeTimeout: a client that has not taken a message within it has stopped reading
	// and is given up on. closeGrace: then how long it has to take what was sent and the
	// close frame before the connection is cut; with writeTimeout, as long as a silent
	// peer is kept (pongWait).
	writeTimeout = 10 * time.Second
	closeGrace   = pongWait - writeTimeout
)

// Close codes sent to clients (4000-4999 are for applications).
const (
	CloseSlowConsumer = 4008 // fell behind; reconnect with ?since= the last seq received
	CloseUnauthorized = 4401 // the credential was revoked, rotated or expired, or the agent deleted
)

// Upgrader returns the WebSocket upgrader of the stream and of /graphql's WebSocket;
// OriginAllowed decides which browsers may open them.
func Upgrader(allowedOrigins []string) *websocket.Upgrader {
	return &websocket.Upgrader{
		ReadBufferSize:  1024,
		WriteBufferSize: 4096,
		CheckOrigin: func(r *http.Request) bool {
			return OriginAllowed(r.Header.Get("Origin"), allowedOrigins)
		},
	}
}

// OriginAllowed says whether a WebSocket handshake with this Origin header may proceed.
// No Origin: not a browser (agents, scripts), allowed. Otherwise the origin must be one
// of the allowed ones, scheme, host and port: the server's own (its public URL, or the
// loopback address it serves on) and the desktop window's. Any other page is refused,
// one on another loopback port included: cookies are not bound to a port, so such a
// page would open the stream with a signed-in person's cookie. Comparing with the
// request's Host is not enough either: a DNS rebinding page's Origin and Host both name
// the attacker's domain, which then resolves to this machine.
func OriginAllowed(origin string, allowed []string) bool {
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" {
		return false // "null" (sandboxed frames, file://) and junk
	}
	for _, a := range allowed {
		if au, err := url.Parse(strings.TrimSpace(a)); err == nil && au.Host != "" && sameOrigin(u, au) {
			return true
		}
	}
	return false
}

// sameOrigin compares scheme, host and port, a default port written or not.
func sameOrigin(a, b *url.URL) bool {
	port := func(u *url.URL) string {
		if p := u.Port(); p != "" {
			return p
		}
		switch strings.ToLower(u.Scheme) {
		case "https", "wss":
			return "443"
		case "http", "ws":
			return "80"
		}
		return ""
	}
	return strings.EqualFold(a.Scheme, b.Scheme) && strings.EqualFold(a.Hostname(), b.Hostname()) && port(a) == port(b)
}

// Stream is an event stream being opened (Open), then served (Serve) or discarded.
type Stream struct {
	watch *Watch
	sub   *Subscriber
	since int64
}

// Open prepares a stream of p's project's events: the stored ones after since (-1:
// none), then the live ones. A live-only stream is registered at once, so that it gets
// everything committed after the handshake; one with a replay is registered when its
// replay's turn comes (Serve), and misses nothing either.
func (h *Hub) Open(ctx context.Context, p *auth.Principal, since int64) (*Stream, error) {
	watch, err := h.Watch(p)
	if err != nil {
		return nil, err
	}
	st := &Stream{watch: watch, since: since}
	if since < 0 {
		sub, err := h.Subscribe(ctx, st.watch, since)
		if err != nil {
			h.Unwatch(st.watch)
			return nil, err
		}
		st.sub = sub
	}
	return st, nil
}

// Discard releases a stream that will not be served (the handshake failed).
func (h *Hub) Discard(st *Stream) {
	if st.sub != nil {
		h.Unsubscribe(st.sub)
	}
	h.Unwatch(st.watch)
}

// Serve sends the stream over conn until the client goes away or ctx ends. It closes
// with CloseSlowConsumer and a reason naming the seq to resume from when the client
// stops reading, with CloseUnauthorized when the credential ends, and with 1001 when
// the server shuts down.
func (h *Hub) Serve(ctx context.Context, conn *websocket.Conn, st *Stream) {
	defer h.Discard(st)
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	watch := st.watch

	// Reader: the client sends nothing we need, but reading is how pongs and the
	// close handshake arrive; a silent peer is dropped after pongWait.
	conn.SetReadLimit(4096)
	conn.SetReadDeadline(time.Now().Add(pongWait))
	conn.SetPongHandler(func(string) error { return conn.SetReadDeadline(time.Now().Add(pongWait)) })
	go func() {
		defer cancel()
		for {
			if _, _, err := conn.ReadMessage(); err != nil {
				return
			}
		}
	}()

	if st.sub == nil {
		sub, err := h.Subscribe(ctx, watch, st.since)
		if err != nil {
			h.end(conn, err, max(st.since, 0), watch)
			return
		}
		st.sub = sub
	}
	sub := st.sub
	sub.last.Store(sub.From())
	// Whoever writes on the socket holds sub.out (direct.go); once this goroutine stops,
	// the fan-out writes on it no more.
	stopDirect := func() {
		sub.out.Lock()
		sub.writeDirect = nil
		sub.out.Unlock()
	}
	defer stopDirect() // before conn.Close
	finish := func(err error) {
		sub.out.Lock()
		sub.writeDirect = nil
		h.end(conn, err, sub.last.Load(), watch)
		sub.out.Unlock()
	}

	// A write is never cut short by its deadline while the client may still read: a
	// frame cut in the middle leaves no way to send the close frame. A write that takes
	// longer than writeTimeout gives the client up (the hub stops queueing for it); the
	// write may still finish within closeGrace, and then the close frame follows.
	var gaveUp atomic.Bool
	stall := time.AfterFunc(time.Hour, func() {
		gaveUp.Store(true)
		h.drop(sub)
	})
	stall.Stop()
	defer stall.Stop()
	timeout := time.Duration(h.writeTimeout.Load())
	// write sends m, with sub.out held.
	write := func(m *Message) error {
		if m.Seq <= sub.Skip && m.Type != "stream.reset" {
			return nil
		}
		// A frame the fan-out began is finished first, whatever follows.
		if err := sub.stopped(); err != nil && m.written == 0 {
			return err
		}
		stall.Reset(timeout)
		conn.SetWriteDeadline(time.Now().Add(timeout + closeGrace))
		var err error
		switch {
		case m.written > 0:
			_, err = conn.NetConn().Write(m.Frame[m.written:])
		case m.Prepared != nil:
			err = conn.WritePreparedMessage(m.Prepared)
		default:
			err = conn.WriteMessage(websocket.TextMessage, m.JSON)
		}
		stall.Stop()
		if err != nil {
			return err
		}
		sub.last.Store(m.Seq)
		if gaveUp.Load() {
			return errStalled
		}
		return nil
	}
	err := h.Replay(ctx, sub, func(m *Message) error {
		sub.out.Lock()
		defer sub.out.Unlock()
		return write(m)
	})
	if err != nil {
		finish(err)
		return
	}
	// Following live events: the fan-out may write on the socket itself from now on.
	sub.out.Lock()
	sub.writeDirect = nonBlockingWriter(conn.NetConn())
	sub.out.Unlock()
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		var err error
		select {
		case <-ctx.Done():
			return // the client went away
		case <-h.closing:
			err = errClosing
		case <-watch.Ended():
			err = errEnded
		case <-sub.Gone:
			err = errStalled
		case m := <-sub.C:
			sub.out.Lock()
			sub.dealt++
			err = write(m)
			sub.out.Unlock()
		case <-ping.C:
			sub.out.Lock()
			err = conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(timeout+closeGrace))
			sub.out.Unlock()
		}
		if err != nil {
			finish(err)
			return
		}
	}
}

// end closes the stream for err with the close frame the client needs to know what to
// do; a failed write leaves nothing to send.
func (h *Hub) end(conn *websocket.Conn, err error, last int64, watch *Watch) {
	switch {
	case errors.Is(err, errStalled):
		closeWith(conn, CloseSlowConsumer, fmt.Sprintf("too slow: fell behind the stream; reconnect with since=%d", last))
	case errors.Is(err, errEnded):
		closeWith(conn, CloseUnauthorized, "credentials ended: "+watch.Reason())
	case errors.Is(err, errClosing):
		closeWith(conn, websocket.CloseGoingAway, fmt.Sprintf("server shutting down; reconnect with since=%d", last))
	case errors.Is(err, context.Canceled):
	case errors.Is(err, net.ErrClosed), websocket.IsUnexpectedCloseError(err), isNetError(err):
	default:
		slog.Warn("event stream", "err", err)
		closeWith(conn, websocket.CloseInternalServerErr, "internal error; reconnect with since="+fmt.Sprint(last))
	}
}

func isNetError(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, websocket.ErrCloseSent)
}

// closeWith sends a close frame, waiting up to closeGrace for room in the socket.
func closeWith(conn *websocket.Conn, code int, reason string) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, closeReason(reason)), time.Now().Add(closeGrace))
}

// closeReason shortens a close reason to the 123 bytes a close frame carries.
func closeReason(reason string) string {
	if len(reason) <= 123 {
		return reason
	}
	reason = reason[:120]
	for !utf8.ValidString(reason) {
		reason = reason[:len(reason)-1]
	}
	return reason + "..."
}
