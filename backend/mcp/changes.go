package mcp

import (
	"context"
	"time"

	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/events"
)

// Changes opens a feed of the ids of the caller's project's tasks as they change
// (created, updated, deleted). The channel closes when ctx ends or the feed breaks;
// whoever reads it then reads the tasks again. The server feeds it from its event hub,
// agentdesk mcp from the event stream (ClientChanges).
type Changes func(ctx context.Context) (<-chan int64, error)

// ClientChanges is a Changes over api's event stream (/api/events).
func ClientChanges(api *client.Client) Changes {
	return func(ctx context.Context) (<-chan int64, error) {
		s, err := api.Events(ctx, -1)
		if err != nil {
			return nil, err
		}
		out := make(chan int64, 64)
		go func() {
			defer close(out)
			defer s.Close()
			for {
				e, err := s.Next()
				if err != nil {
					return
				}
				if id, ok := events.TaskID(e.Type, e.Data); ok {
					select {
					case out <- id:
					case <-ctx.Done():
						return
					case <-time.After(time.Minute): // a reader that stopped reading
						return
					}
				}
			}
		}()
		return out, nil
	}
}
