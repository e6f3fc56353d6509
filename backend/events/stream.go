package events

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Keepalive and limits of a stream connection.
const (
	pingEvery    = 25 * time.Second
	pongWait     = 60 * time.Second
	writeTimeout = 10 * time.Second
)

// Close codes sent to clients (4000-4999 are for applications).
const (
	CloseSlowConsumer = 4008 // fell behind; reconnect with ?since= the last seq received
)

// Upgrader returns the WebSocket upgrader of the stream. A browser's Origin must be the
// server's own host, or one of allowedOrigins; clients without an Origin header
// (agents, scripts) are not browsers and pass.
func Upgrader(allowedOrigins []string) *websocket.Upgrader {
	return &websocket.Upgrader{
		ReadBufferSize:  1024,
		WriteBufferSize: 4096,
		CheckOrigin: func(r *http.Request) bool {
			origin := r.Header.Get("Origin")
			if origin == "" {
				return true
			}
			u, err := url.Parse(origin)
			if err != nil {
				return false
			}
			if strings.EqualFold(u.Host, r.Host) {
				return true
			}
			for _, o := range allowedOrigins {
				if strings.EqualFold(strings.TrimRight(o, "/"), origin) {
					return true
				}
			}
			return false
		},
	}
}

// Serve sends the replay then the live events of sub over conn until the client goes
// away, ctx ends, or the subscriber falls behind (then it closes with
// CloseSlowConsumer and a reason naming the seq to resume from).
func (h *Hub) Serve(ctx context.Context, conn *websocket.Conn, sub *Subscriber, replay []*Message) {
	defer h.Unsubscribe(sub)
	defer conn.Close()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()

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

	var last int64
	write := func(m *Message) error {
		if m.Seq <= sub.Skip && m.Type != "stream.reset" {
			return nil
		}
		conn.SetWriteDeadline(time.Now().Add(writeTimeout))
		if err := conn.WritePreparedMessage(m.Prepared); err != nil {
			return err
		}
		last = m.Seq
		return nil
	}
	for _, m := range replay {
		if write(m) != nil {
			return
		}
		if m.Type != "stream.reset" {
			sub.Skip = m.Seq
		}
	}
	ping := time.NewTicker(pingEvery)
	defer ping.Stop()
	for {
		select {
		case <-ctx.Done():
			return // the client went away
		case <-h.closing:
			closeWith(conn, websocket.CloseGoingAway, "server shutting down; reconnect with since=last seq")
			return
		case <-sub.Gone:
			closeWith(conn, CloseSlowConsumer, fmt.Sprintf("too slow: fell behind the stream; reconnect with since=%d", last))
			return
		case m := <-sub.C:
			if write(m) != nil {
				return
			}
		case <-ping.C:
			if conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(writeTimeout)) != nil {
				return
			}
		}
	}
}

func closeWith(conn *websocket.Conn, code int, reason string) {
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
}
