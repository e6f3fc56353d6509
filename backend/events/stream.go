package events

import (
	"context"
	"fmt"
	"net"
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
// of the configured ones (the public URL, the desktop window's) or a loopback host
// (localhost, 127.0.0.0/8, ::1). Comparing with the request's Host is not enough: a DNS
// rebinding page's Origin and Host both name the attacker's domain, which then resolves
// to this machine.
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
	host := strings.ToLower(u.Hostname())
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
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
