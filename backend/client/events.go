package client

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/gorilla/websocket"
)

// Event is one change from the event stream.
type Event struct {
	Seq       int64           `json:"seq"`
	Type      string          `json:"type"` // task.created, task.updated, message.created, stream.reset, ...
	ProjectID string          `json:"projectId"`
	At        time.Time       `json:"at"`
	Data      json.RawMessage `json:"data"`
}

// Stream is an open event stream.
type Stream struct {
	conn *websocket.Conn
	// Last is the seq of the last event read: reconnect with it to miss nothing.
	Last int64
}

// Events opens the event stream, replaying what came after since (-1: live events
// only). A stream.reset event means since is older than the kept log: reload state.
func (c *Client) Events(ctx context.Context, since int64) (*Stream, error) {
	u, err := url.Parse(c.base + "/api/events")
	if err != nil {
		return nil, err
	}
	u.Scheme = strings.Replace(u.Scheme, "http", "ws", 1)
	q := u.Query()
	if since >= 0 {
		q.Set("since", strconv.FormatInt(since, 10))
	}
	if c.token == "" && c.projectID != "" {
		q.Set("project_id", c.projectID)
	}
	u.RawQuery = q.Encode()
	req, _ := http.NewRequest("GET", u.String(), nil)
	c.authenticate(req)
	conn, resp, err := websocket.DefaultDialer.DialContext(ctx, u.String(), req.Header)
	if err != nil {
		if resp != nil {
			defer resp.Body.Close()
			if resp.StatusCode >= 300 {
				return nil, decodeError(resp)
			}
		}
		return nil, fmt.Errorf("agentdesk: open event stream: %w", err)
	}
	s := &Stream{conn: conn, Last: since}
	// The server pings; answering keeps the read deadline moving.
	conn.SetPingHandler(func(data string) error {
		conn.SetReadDeadline(time.Now().Add(90 * time.Second))
		return conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(5*time.Second))
	})
	go func() { <-ctx.Done(); conn.Close() }()
	return s, nil
}

// Next waits for the next event. It fails when the stream ends; reconnect with
// Events(ctx, s.Last).
func (s *Stream) Next() (Event, error) {
	var e Event
	s.conn.SetReadDeadline(time.Now().Add(90 * time.Second))
	if err := s.conn.ReadJSON(&e); err != nil {
		return e, err
	}
	if e.Type != "stream.reset" || e.Seq > 0 {
		s.Last = e.Seq
	}
	return e, nil
}

// Close ends the stream.
func (s *Stream) Close() error { return s.conn.Close() }
