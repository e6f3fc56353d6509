package events

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Options tune a hub; the zero value is what agentdesk runs with.
type Options struct {
	Retention  time.Duration // how long events are kept; default 7 days
	BufferSize int           // events a subscriber may fall behind by before it is dropped; default 1024
}

// Hub fans stored events out to subscribers.
type Hub struct {
	store *store.Store
	opts  Options
	wake  chan struct{}

	mu       sync.Mutex
	projects map[string]*feed

	closing   chan struct{}
	closeOnce sync.Once
}

// Close ends every stream (clients are told the server is going away).
func (h *Hub) Close() { h.closeOnce.Do(func() { close(h.closing) }) }

// feed is one project's subscribers and the last seq delivered to them.
type feed struct {
	last int64
	subs map[*Subscriber]struct{}
}

// Message is one event ready to send: its seq, its type (for scope filtering) and its
// encoded form, prepared once for every subscriber.
type Message struct {
	Seq      int64
	Type     string
	JSON     []byte
	Prepared *websocket.PreparedMessage
}

// Subscriber receives a project's events that its principal may read.
type Subscriber struct {
	Principal *auth.Principal
	C         chan *Message
	// Gone is closed when the hub drops the subscriber for falling behind.
	Gone chan struct{}
	// Skip is the seq up to which the subscriber already has the events; live events
	// at or below it are not sent again.
	Skip int64
	once sync.Once
}

// New returns a hub; Attach gives it its store, Run starts it.
func New(opts Options) *Hub {
	if opts.Retention <= 0 {
		opts.Retention = 7 * 24 * time.Hour
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = 1024
	}
	return &Hub{opts: opts, wake: make(chan struct{}, 1), projects: map[string]*feed{}, closing: make(chan struct{})}
}

// Attach sets the store the hub reads; the store's OnCommit must call Notify.
func (h *Hub) Attach(st *store.Store) { h.store = st }

// Notify tells the hub that events were committed. It never blocks: it is called from
// the store's writer.
func (h *Hub) Notify([]model.Event) {
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Run delivers events until ctx ends. It also looks every second for events written by
// other processes, and prunes events past the retention hourly.
func (h *Hub) Run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	prune := time.NewTicker(time.Hour)
	defer prune.Stop()
	h.prune(ctx)
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-tick.C:
		case <-prune.C:
			h.prune(ctx)
			continue
		}
		h.deliver(ctx)
	}
}

func (h *Hub) prune(ctx context.Context) {
	before := time.Now().Add(-h.opts.Retention)
	err := h.store.Write(ctx, func(tx *store.Tx) error {
		_, err := tx.PruneEvents(ctx, before)
		return err
	})
	if err != nil && ctx.Err() == nil {
		slog.Warn("prune events", "err", err)
	}
}

// deliver reads each watched project's new events and hands them to its subscribers.
func (h *Hub) deliver(ctx context.Context) {
	h.mu.Lock()
	watched := make(map[string]int64, len(h.projects))
	for id, f := range h.projects {
		watched[id] = f.last
	}
	h.mu.Unlock()
	for projectID, last := range watched {
		for {
			evs, err := h.store.Read().EventsSince(ctx, projectID, last, 500)
			if err != nil {
				if ctx.Err() == nil {
					slog.Warn("read events", "project", projectID, "err", err)
				}
				break
			}
			if len(evs) == 0 {
				break
			}
			msgs := make([]*Message, len(evs))
			for i, e := range evs {
				msgs[i] = encode(e)
			}
			last = evs[len(evs)-1].Seq
			h.mu.Lock()
			if f := h.projects[projectID]; f != nil {
				for _, m := range msgs {
					if m.Seq <= f.last {
						continue
					}
					for sub := range f.subs {
						if Allowed(sub.Principal, m.Type) {
							h.send(f, sub, m)
						}
					}
					f.last = m.Seq
				}
			}
			h.mu.Unlock()
			if len(evs) < 500 {
				break
			}
		}
	}
}

// send hands m to sub without waiting; a subscriber whose buffer is full is dropped, so
// that a slow client never holds the others back. Called with h.mu held.
func (h *Hub) send(f *feed, sub *Subscriber, m *Message) {
	select {
	case sub.C <- m:
	default:
		delete(f.subs, sub)
		sub.once.Do(func() { close(sub.Gone) })
	}
}

func encode(e model.Event) *Message {
	raw, _ := json.Marshal(e)
	pm, _ := websocket.NewPreparedMessage(websocket.TextMessage, raw)
	return &Message{Seq: e.Seq, Type: e.Type, JSON: raw, Prepared: pm}
}

// Allowed reports whether p may receive events of the type: task and agent events need
// task:read; conversation events need messaging:read.
func Allowed(p *auth.Principal, typ string) bool {
	switch {
	case strings.HasPrefix(typ, "stream."):
		return true
	case strings.HasPrefix(typ, "task."), strings.HasPrefix(typ, "agent."):
		return p.Has(auth.TaskRead)
	case strings.HasPrefix(typ, "conversation."), strings.HasPrefix(typ, "message."),
		strings.HasPrefix(typ, "reaction."), strings.HasPrefix(typ, "document."), strings.HasPrefix(typ, "participant."):
		return p.Has(auth.MessagingRead)
	}
	return p.Has(auth.Admin)
}

// Subscribe registers p for its project's events after seq since. It returns the
// subscriber and the replay: the stored events in (since, now], filtered, or a single
// stream.reset event when since is older than what the log keeps (the client should
// reload its state, then follow the stream from the reset's seq). Live events after the
// replay arrive on the subscriber's channel; none is lost or repeated in between.
func (h *Hub) Subscribe(ctx context.Context, p *auth.Principal, since int64) (*Subscriber, []*Message, error) {
	sub := &Subscriber{Principal: p, C: make(chan *Message, h.opts.BufferSize), Gone: make(chan struct{})}
	h.mu.Lock()
	f := h.projects[p.ProjectID]
	if f == nil {
		_, last, err := h.store.Read().EventBounds(ctx, p.ProjectID)
		if err != nil {
			h.mu.Unlock()
			return nil, nil, err
		}
		f = &feed{last: last, subs: map[*Subscriber]struct{}{}}
		h.projects[p.ProjectID] = f
	}
	f.subs[sub] = struct{}{}
	upTo := f.last
	h.mu.Unlock()

	if since < 0 || since >= upTo {
		if since > upTo {
			// The hub may not have delivered the newest events yet: ask the log itself.
			_, last, err := h.store.Read().EventBounds(ctx, p.ProjectID)
			if err != nil {
				h.Unsubscribe(sub)
				return nil, nil, err
			}
			if since > last {
				return sub, []*Message{h.reset(p.ProjectID, last, "since is past the newest event: the database was restored or replaced; reload")}, nil
			}
			sub.Skip = since
		}
		return sub, nil, nil
	}
	first, _, err := h.store.Read().EventBounds(ctx, p.ProjectID)
	if err != nil {
		h.Unsubscribe(sub)
		return nil, nil, err
	}
	if first == 0 || since+1 < first {
		return sub, []*Message{h.reset(p.ProjectID, upTo, "events after since are no longer kept: reload, then follow the stream")}, nil
	}
	var replay []*Message
	for after := since; after < upTo; {
		evs, err := h.store.Read().EventsSince(ctx, p.ProjectID, after, 500)
		if err != nil {
			h.Unsubscribe(sub)
			return nil, nil, err
		}
		if len(evs) == 0 {
			break
		}
		for _, e := range evs {
			if e.Seq > upTo {
				break
			}
			if Allowed(p, e.Type) {
				replay = append(replay, encode(e))
			}
			after = e.Seq
		}
	}
	return sub, replay, nil
}

func (h *Hub) reset(projectID string, seq int64, reason string) *Message {
	return encode(model.Event{Seq: seq, Type: "stream.reset", ProjectID: projectID, At: time.Now().UTC(),
		Data: map[string]any{"reason": reason, "seq": seq}})
}

// Unsubscribe removes a subscriber.
func (h *Hub) Unsubscribe(sub *Subscriber) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f := h.projects[sub.Principal.ProjectID]; f != nil {
		delete(f.subs, sub)
		if len(f.subs) == 0 {
			delete(h.projects, sub.Principal.ProjectID)
		}
	}
}
