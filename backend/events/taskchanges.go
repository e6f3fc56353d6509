package events

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/agentdesk/agentdesk/backend/auth"
)

// TaskID is the task id an event is about, if it is a task event.
func TaskID(typ string, data json.RawMessage) (int64, bool) {
	if !strings.HasPrefix(typ, "task.") {
		return 0, false
	}
	var t struct {
		ID int64 `json:"id"`
	}
	if json.Unmarshal(data, &t) != nil || t.ID == 0 {
		return 0, false
	}
	return t.ID, true
}

// TaskChanges feeds the ids of p's project's tasks as they change (created, updated,
// deleted) from now on, as p may see them: what MCP's ask_human and resource
// subscriptions and A2A's streams wait on. The channel closes when ctx ends, when p's
// credential ends, or when the hub drops the feed for falling behind; whoever reads it
// then reads the tasks again. It counts against the credential's open sockets.
func (h *Hub) TaskChanges(ctx context.Context, p *auth.Principal) (<-chan int64, error) {
	w, err := h.Watch(p)
	if err != nil {
		return nil, err
	}
	sub, err := h.Subscribe(ctx, w, -1)
	if err != nil {
		h.Unwatch(w)
		return nil, err
	}
	out := make(chan int64, 64)
	go func() {
		defer close(out)
		defer h.Unwatch(w)
		defer h.Unsubscribe(sub)
		for {
			select {
			case m := <-sub.C:
				var e struct {
					Type string          `json:"type"`
					Data json.RawMessage `json:"data"`
				}
				if m == nil || json.Unmarshal(m.JSON, &e) != nil || !Allowed(p, e.Type) {
					continue
				}
				if id, ok := TaskID(e.Type, e.Data); ok {
					select {
					case out <- id:
					case <-ctx.Done():
						return
					}
				}
			case <-sub.Gone:
				return
			case <-w.Ended():
				return
			case <-h.closing:
				return
			case <-ctx.Done():
				return
			}
		}
	}()
	return out, nil
}
