package events

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Options tune a hub; the zero value is what agentdesk runs with.
type Options struct {
	Retention  time.Duration // how long events are kept; default 7 days
	BufferSize int           // events a subscriber may fall behind by before it is dropped; default 1024
	// MaxReplays is how many ?since= replays run at once; the others wait their turn
	// (connected, before they are registered for live events). Default: the number of
	// CPUs, at least 2.
	MaxReplays int
}

// replayPage is how many stored events a replay reads at a time: a replay holds one
// page in memory, whatever the length of the history it sends.
const replayPage = 256

// checkEvery is how often every open stream's credential is checked again, so that an
// expiry ends it with no traffic; a commit that may have ended one checks at once too
// (checkIfChanged).
const checkEvery = 250 * time.Millisecond

// CheckFunc tells whether the credential a principal authenticated with still holds;
// an errs.Unauthenticated error ends its streams, with the error's message as reason.
type CheckFunc func(ctx context.Context, p *auth.Principal) error

// Hub fans stored events out to subscribers.
type Hub struct {
	store        *store.Store
	check        CheckFunc
	opts         Options
	wake         chan struct{}
	replays      chan struct{} // a slot per replay running
	writeTimeout atomic.Int64  // nanoseconds; export_test.go shortens it
	// maxDeliveryWait in nanoseconds; export_test.go changes it.
	maxDeliveryWait atomic.Int64

	mu       sync.Mutex
	projects map[string]*feed
	// The open watches by credential: checked once per credential however many sockets
	// share it, and at most MaxSocketsPerCredential each.
	credentials map[credential]map[*Watch]struct{}
	unchecked   bool // a watch came since checkCredentials last looked at them

	// checkedChanges is the count of credential changes (store.Store.CredentialChanges)
	// read before the last check that followed a commit. Only Run's goroutine uses it.
	checkedChanges int64

	// Delivery passes (AwaitDelivery). notified counts Notify's calls. Under passMu:
	// delivered, the notified count the last finished pass began with (every commit
	// notified before it began was handed to every subscriber), and passEnded, closed
	// when a pass ends.
	notified  atomic.Int64
	passMu    sync.Mutex
	delivered int64
	passEnded chan struct{}

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
	Frame    []byte // a live event's whole WebSocket frame, for the fan-out's writes (direct.go)
	written  int    // bytes of Frame the fan-out wrote already; the socket's goroutine writes the rest
}

// Watch is a connection's hold on the credential it authenticated with. The hub checks
// the credential again before each delivery that follows a change that may have ended
// it, and every checkEvery; once it no longer authenticates (revoked, rotated, expired,
// agent deleted), Ended is closed and the connection must close with code 4401 and
// Reason.
type Watch struct {
	Principal *auth.Principal
	ended     chan struct{}
	reason    string // set before ended closes
	once      sync.Once
}

// Ended is closed when the credential stops authenticating.
func (w *Watch) Ended() <-chan struct{} { return w.ended }

// Reason says why the credential ended; "" while it holds.
func (w *Watch) Reason() string {
	select {
	case <-w.ended:
		return w.reason
	default:
		return ""
	}
}

func (w *Watch) end(reason string) {
	w.once.Do(func() {
		w.reason = reason
		close(w.ended)
	})
}

// MaxSocketsPerCredential is how many sockets (event streams and GraphQL WebSockets
// together) one credential may hold open at once: enough for every tab and agent of a
// person, far from the thousands of goroutines and buffers one token could otherwise
// pin (300 sockets of 100 subscriptions each).
const MaxSocketsPerCredential = 64

// socketsRetryAfter is the Retry-After of a socket refused for MaxSocketsPerCredential:
// a guess, since the count drops only when one of the credential's sockets closes.
const socketsRetryAfter = 10 * time.Second

// credential identifies what a principal authenticated with: a token, an agent (the
// project's digest with the agent's name), a session, the local owner of a project.
// Many sockets may share one.
type credential struct {
	kind                 auth.Kind
	project, name, proof string
	tokenID, agentID     int64
}

func credentialOf(p *auth.Principal) credential {
	return credential{p.Kind, p.ProjectID, p.Name, string(p.TokenHash) + p.AgentDigest + string(p.SessionHash), p.TokenID, p.AgentID}
}

// Watch registers a socket's credential for checking; Unwatch when the socket closes.
// A credential that already holds MaxSocketsPerCredential watches gets none: a
// rate_limited error (429 before the upgrade) saying so.
func (h *Hub) Watch(p *auth.Principal) (*Watch, error) {
	c := credentialOf(p)
	h.mu.Lock()
	defer h.mu.Unlock()
	watches := h.credentials[c]
	if len(watches) >= MaxSocketsPerCredential {
		return nil, errs.Limited(socketsRetryAfter, "this credential already holds %d open event stream and GraphQL WebSocket connections, the most one may; close one, or use a credential of its own for each client", MaxSocketsPerCredential)
	}
	if watches == nil {
		watches = map[*Watch]struct{}{}
		h.credentials[c] = watches
	}
	w := &Watch{Principal: p, ended: make(chan struct{})}
	watches[w] = struct{}{}
	h.unchecked = true
	return w, nil
}

// Unwatch forgets a watch; its credential may open another socket. Forgetting one
// twice changes nothing.
func (h *Hub) Unwatch(w *Watch) {
	c := credentialOf(w.Principal)
	h.mu.Lock()
	defer h.mu.Unlock()
	watches := h.credentials[c]
	delete(watches, w)
	if len(watches) == 0 {
		delete(h.credentials, c)
	}
}

// checkCredentials ends the watches whose credential no longer authenticates: each
// credential is checked once, however many sockets share it (a fan-out of one token).
func (h *Hub) checkCredentials(ctx context.Context) {
	if h.check == nil {
		return
	}
	h.mu.Lock()
	h.unchecked = false
	held := make(map[credential]*auth.Principal, len(h.credentials))
	for c, watches := range h.credentials {
		for w := range watches {
			held[c] = w.Principal // any of them: they authenticated with the same
			break
		}
	}
	h.mu.Unlock()
	for c, p := range held {
		// Only a refusal ends a stream; the database being busy or closing does not.
		err := h.check(ctx, p)
		if errs.CodeOf(err) != errs.Unauthenticated {
			continue
		}
		_, reason := errs.Public(err)
		h.mu.Lock()
		for w := range h.credentials[c] {
			w.end(reason)
		}
		h.mu.Unlock()
	}
}

// checkIfChanged runs checkCredentials after a commit, unless no credential can have
// ended since the last time: the count of the changes that can end one (store's
// CredentialChanges) has not moved, and no watch came since. Checking costs a query per
// agent and session holding a stream (1,000 agents, 1,000 queries a commit); reading
// the count costs one. An expiry moves no count: the check every checkEvery sees it. A
// new watch is checked at the next commit whatever the count: its credential may have
// ended between its authentication and its watch, before the last check counted the
// change without holding it.
func (h *Hub) checkIfChanged(ctx context.Context) {
	h.mu.Lock()
	idle, fresh := len(h.credentials) == 0, h.unchecked
	h.mu.Unlock()
	if h.check == nil || idle {
		return
	}
	// Read before the checks and kept only after them: a change committed while they
	// run moves the count past it, and is checked at the next wake.
	n, err := h.store.CredentialChanges(ctx)
	if err == nil && n == h.checkedChanges && !fresh {
		return
	}
	h.checkCredentials(ctx)
	if err == nil {
		h.checkedChanges = n
	}
}

// Subscriber receives a project's events that its principal may read.
type Subscriber struct {
	Principal *auth.Principal
	Watch     *Watch
	C         chan *Message
	// Gone is closed when the hub drops the subscriber for falling behind.
	Gone chan struct{}
	// Skip is the seq up to which the subscriber already has the events; live events
	// at or below it are not sent again.
	Skip int64
	once sync.Once

	// The socket's writes (direct.go): out is held by whoever writes on it. Under out:
	// writeDirect, set while the socket's goroutine follows live events on an open
	// socket (nil otherwise), and dealt, how many of the messages handed to it through
	// C it has written or passed over. queued is how many were handed (under h.mu).
	// last is the seq the client has the events up to.
	out         sync.Mutex
	writeDirect writeNowFunc
	dealt       int64
	queued      int64
	last        atomic.Int64

	// The replay: the stored events in (since, upTo], or reset instead.
	since, upTo int64
	reset       *Message
	slot        bool // holds a replay slot
	slotOnce    sync.Once
}

// From is the seq the subscriber's client has the events up to before anything is
// sent: a client dropped at once resumes from it.
func (s *Subscriber) From() int64 {
	if s.since >= 0 {
		return s.since
	}
	return s.upTo
}

// stopped reports why the subscriber must not be sent anything more: its credential
// ended, or the hub dropped it.
func (s *Subscriber) stopped() error {
	select {
	case <-s.Watch.ended:
		return errEnded
	case <-s.Gone:
		return errStalled
	default:
		return nil
	}
}

// New returns a hub; Attach gives it its store, Run starts it.
func New(opts Options) *Hub {
	if opts.Retention <= 0 {
		opts.Retention = 7 * 24 * time.Hour
	}
	if opts.BufferSize <= 0 {
		opts.BufferSize = 1024
	}
	if opts.MaxReplays <= 0 {
		// A replay keeps a core busy (reading, encoding, writing): more at once than
		// cores gain nothing and hold more memory (TestReplayMemory's peak RSS on 2
		// cores: 101-106 MiB with 4 at once, 71 MiB with 2, in the same time).
		opts.MaxReplays = max(2, runtime.NumCPU())
	}
	h := &Hub{opts: opts, wake: make(chan struct{}, 1), replays: make(chan struct{}, opts.MaxReplays),
		projects: map[string]*feed{}, credentials: map[credential]map[*Watch]struct{}{}, closing: make(chan struct{}),
		passEnded: make(chan struct{})}
	h.maxDeliveryWait.Store(int64(maxDeliveryWait))
	h.writeTimeout.Store(int64(writeTimeout))
	return h
}

// Subscribers is how many subscribers follow the project's live events.
func (h *Hub) Subscribers(projectID string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	if f := h.projects[projectID]; f != nil {
		return len(f.subs)
	}
	return 0
}

// Attach sets the store the hub reads (its OnCommit must call Notify) and the check of
// credentials that streams ask before sending (nil: none).
func (h *Hub) Attach(st *store.Store, check CheckFunc) { h.store, h.check = st, check }

// Notify tells the hub that events were committed. It never blocks: it is called from
// the store's writer.
func (h *Hub) Notify([]model.Event) {
	h.notified.Add(1)
	select {
	case h.wake <- struct{}{}:
	default:
	}
}

// Run delivers events until ctx ends. It also looks every second for events written by
// other processes, and checks the streams' credentials every checkEvery. (Pruning old
// events is background work: backend/jobs calls PruneEvents.)
func (h *Hub) Run(ctx context.Context) {
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	check := time.NewTicker(checkEvery)
	defer check.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-h.wake:
		case <-tick.C:
		case <-check.C:
			h.checkCredentials(ctx)
			continue
		}
		covers := h.notified.Load() // this pass reads every commit notified so far
		// A commit may have ended a credential: check before sending what follows it.
		h.checkIfChanged(ctx)
		h.deliver(ctx)
		h.passMu.Lock()
		h.delivered = covers
		close(h.passEnded)
		h.passEnded = make(chan struct{})
		h.passMu.Unlock()
	}
}

// maxDeliveryWait bounds how long AwaitDelivery holds a write's answer: a hub slowed
// down (thousands of subscribers, a burst of writes) delays answers by no more.
const maxDeliveryWait = 50 * time.Millisecond

// AwaitDelivery returns once the events committed so far are handed to every
// subscriber of this server: written on each idle socket, queued for the others. The
// store calls it before answering a write that made events (store.Options), so that
// when a client is told its change is done, every stream here already has it; a
// change made on another server reaches this one's streams by its NOTIFY, later. It
// returns at once when nobody follows any project, and after maxDeliveryWait at most.
// The cost falls on the writer's caller: with 1,000 subscribers on two cores, about
// 8 ms (docs/performance.md).
func (h *Hub) AwaitDelivery(ctx context.Context) {
	h.mu.Lock()
	idle := len(h.projects) == 0
	h.mu.Unlock()
	if idle {
		return
	}
	mine := h.notified.Load()
	limit := time.NewTimer(time.Duration(h.maxDeliveryWait.Load()))
	defer limit.Stop()
	for {
		h.passMu.Lock()
		done, ended := h.delivered >= mine, h.passEnded
		h.passMu.Unlock()
		if done {
			return
		}
		select {
		case <-ended:
		case <-limit.C:
			return
		case <-ctx.Done():
			return
		case <-h.closing:
			return
		}
	}
}

// pruneBatch is how many events one write of PruneEvents forgets at most.
const pruneBatch = 5000

// PruneEvents forgets the events older than the retention, pruneBatch a write so that
// other writes go between them: in one write, a million expired events held the writer
// (every create waited) for the whole pass (docs/performance.md).
func (h *Hub) PruneEvents(ctx context.Context) error {
	before := time.Now().Add(-h.opts.Retention)
	// Each batch copies what it deletes into the activity trail first: fill the trail
	// in bounded writes before, so that the first batch does not copy a backlog.
	for more := true; more; {
		if err := h.store.Write(ctx, store.Author{}, func(tx *store.Tx) (err error) {
			more, err = tx.IndexActivity(ctx, 10_000)
			return err
		}); err != nil {
			return err
		}
	}
	for {
		var n int64
		if err := h.store.Write(ctx, store.Author{}, func(tx *store.Tx) (err error) {
			n, err = tx.PruneEventsBatch(ctx, before, pruneBatch)
			return err
		}); err != nil || n < pruneBatch {
			return err
		}
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
		h.deliverProject(ctx, projectID, last)
	}
}

// deliverProject reads the project's events after last, a page at a time, and fans
// each page out.
func (h *Hub) deliverProject(ctx context.Context, projectID string, last int64) {
	for {
		evs, err := h.store.Read().EventsSince(ctx, projectID, last, 500)
		if err != nil {
			if ctx.Err() == nil {
				slog.Warn("read events", "project", projectID, "err", err)
			}
			return
		}
		if len(evs) == 0 {
			return
		}
		msgs := make([]*Message, len(evs))
		for i, e := range evs {
			msgs[i] = encode(e)
		}
		last = evs[len(evs)-1].Seq
		h.fanOut(projectID, msgs)
		if len(evs) < 500 {
			return
		}
	}
}

// fanOut hands each message the project's feed has not had yet to the subscribers that
// may read it. The feed may have changed since deliver looked (emptied, or made again
// by a new subscriber at a later seq): what it already has is not sent again.
func (h *Hub) fanOut(projectID string, msgs []*Message) {
	h.mu.Lock()
	defer h.mu.Unlock()
	f := h.projects[projectID]
	if f == nil {
		return // no subscriber left
	}
	for _, m := range msgs {
		if m.Seq <= f.last {
			continue
		}
		to := make([]*Subscriber, 0, len(f.subs))
		for sub := range f.subs {
			if Allowed(sub.Principal, m.Type) && sub.Watch.Reason() == "" {
				to = append(to, sub)
			}
		}
		// Written on each idle socket at once (direct.go); what is not written goes
		// through the socket's goroutine.
		for i, n := range writeEach(to, m) {
			switch {
			case n <= 0:
				h.send(f, to[i], m)
			case n < len(m.Frame):
				h.send(f, to[i], m.rest(n))
			}
		}
		f.last = m.Seq
	}
}

// send hands m to sub without waiting; a subscriber whose buffer is full is dropped, so
// that a slow client never holds the others back. Called with h.mu held.
func (h *Hub) send(f *feed, sub *Subscriber, m *Message) {
	select {
	case sub.C <- m:
		sub.queued++
	default:
		delete(f.subs, sub)
		sub.once.Do(func() { close(sub.Gone) })
	}
}

// drop stops sending to sub: its client stopped reading.
func (h *Hub) drop(sub *Subscriber) {
	h.Unsubscribe(sub)
	sub.once.Do(func() { close(sub.Gone) })
}

// encode prepares a live event, sent to every subscriber: the frame is built once.
func encode(e model.Event) *Message {
	raw, _ := json.Marshal(e)
	pm, _ := websocket.NewPreparedMessage(websocket.TextMessage, raw)
	return &Message{Seq: e.Seq, Type: e.Type, JSON: raw, Prepared: pm, Frame: TextFrame(raw)}
}

// encodeOnce encodes an event sent to one subscriber (a replay): no prepared frame.
func encodeOnce(e model.Event) *Message {
	size := 128 + len(e.Type) + len(e.ProjectID)
	if raw, ok := e.Data.(json.RawMessage); ok {
		size += len(raw)
	}
	return &Message{Seq: e.Seq, Type: e.Type, JSON: appendEvent(make([]byte, 0, size), e)}
}

// appendEvent appends e's JSON, as json.Marshal writes it but for the escaping of <, >
// and & (the same JSON value). A stored event's data is JSON already: it is copied as
// it is, where json.Marshal would scan and re-encode it, a replay's main cost.
func appendEvent(b []byte, e model.Event) []byte {
	data, ok := e.Data.(json.RawMessage)
	if !ok || !plain(e.Type) || !plain(e.ProjectID) {
		raw, _ := json.Marshal(e)
		return append(b, raw...)
	}
	b = append(b, `{"seq":`...)
	b = strconv.AppendInt(b, e.Seq, 10)
	b = append(b, `,"type":"`...)
	b = append(b, e.Type...)
	b = append(b, `","projectId":"`...)
	b = append(b, e.ProjectID...)
	b = append(b, `","at":"`...)
	b = e.At.AppendFormat(b, time.RFC3339Nano)
	b = append(b, `","data":`...)
	if len(data) == 0 {
		data = json.RawMessage("null")
	}
	b = append(b, data...)
	return append(b, '}')
}

// plain reports whether s needs no escaping in a JSON string.
func plain(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7f || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

// Allowed reports whether p may receive events of the type: the service's rule
// (service.MayReceive), which GraphQL subscriptions follow too.
func Allowed(p *auth.Principal, typ string) bool { return service.MayReceive(p, typ) }

// Subscribe registers the watch's principal for its project's events after seq since
// (-1: live events only). When there are stored events to replay, it first waits for a
// replay slot (Options.MaxReplays); Replay then sends them, and releases the slot. Live
// events after the replay arrive on the subscriber's channel; none is lost or repeated
// in between. When since is older than what the log keeps, or past its end (a restored
// database), the replay is a single stream.reset event instead: the client should
// reload its state, then follow the stream from the reset's seq.
//
// Unsubscribe the subscriber when done with it.
func (h *Hub) Subscribe(ctx context.Context, w *Watch, since int64) (*Subscriber, error) {
	p := w.Principal
	sub := &Subscriber{Principal: p, Watch: w, C: make(chan *Message, h.opts.BufferSize), Gone: make(chan struct{}), since: since}
	if since >= 0 {
		first, last, err := h.store.Read().EventBounds(ctx, p.ProjectID)
		if err != nil {
			return nil, err
		}
		if since < last && since+1 >= first && first > 0 { // events to replay: wait for a slot
			select {
			case h.replays <- struct{}{}:
				sub.slot = true
			case <-ctx.Done():
				return nil, ctx.Err()
			case <-h.closing:
				return nil, errClosing
			case <-w.ended:
				return nil, errEnded
			}
		}
	}
	h.mu.Lock()
	f := h.projects[p.ProjectID]
	if f == nil {
		_, last, err := h.store.Read().EventBounds(ctx, p.ProjectID)
		if err != nil {
			h.mu.Unlock()
			h.releaseSlot(sub)
			return nil, err
		}
		f = &feed{last: last, subs: map[*Subscriber]struct{}{}}
		h.projects[p.ProjectID] = f
	}
	f.subs[sub] = struct{}{}
	sub.upTo = f.last
	h.mu.Unlock()

	if since < 0 || since >= sub.upTo {
		if since > sub.upTo {
			// The hub may not have delivered the newest events yet: ask the log itself.
			_, last, err := h.store.Read().EventBounds(ctx, p.ProjectID)
			if err != nil {
				h.Unsubscribe(sub)
				return nil, err
			}
			if since > last {
				sub.reset = h.reset(p.ProjectID, last, "since is past the newest event: the database was restored or replaced; reload")
			}
			sub.Skip = since
		}
		return sub, nil
	}
	first, _, err := h.store.Read().EventBounds(ctx, p.ProjectID)
	if err != nil {
		h.Unsubscribe(sub)
		return nil, err
	}
	if first == 0 || since+1 < first {
		sub.reset = h.reset(p.ProjectID, sub.upTo, "events after since are no longer kept: reload, then follow the stream")
	}
	return sub, nil
}

// Replay sends the subscriber's replay through send, page by page from the stored log
// (only the events its principal may read), then releases its replay slot. It stops
// with errStalled or errEnded when the subscriber is dropped or its credential ends, and
// with send's error.
func (h *Hub) Replay(ctx context.Context, sub *Subscriber, send func(*Message) error) error {
	defer h.releaseSlot(sub)
	if sub.reset != nil {
		return send(sub.reset)
	}
	if sub.since < 0 {
		return nil // live events only
	}
	for after := sub.since; after < sub.upTo; {
		evs, err := h.store.Read().EventsSince(ctx, sub.Principal.ProjectID, after, replayPage)
		if err != nil {
			return err
		}
		if len(evs) == 0 {
			return nil
		}
		for _, e := range evs {
			if e.Seq > sub.upTo {
				return nil
			}
			if err := sub.stopped(); err != nil {
				return err
			}
			select {
			case <-h.closing:
				return errClosing
			default:
			}
			if Allowed(sub.Principal, e.Type) {
				if err := send(encodeOnce(e)); err != nil {
					return err
				}
			}
			after = e.Seq
		}
	}
	return nil
}

func (h *Hub) releaseSlot(sub *Subscriber) {
	if sub.slot {
		sub.slotOnce.Do(func() { <-h.replays })
	}
}

// Errors that end a stream, each with its close code (stream.go).
var (
	errStalled = errors.New("the client stopped reading")
	errEnded   = errors.New("the credential ended")
	errClosing = errors.New("the server is shutting down")
)

func (h *Hub) reset(projectID string, seq int64, reason string) *Message {
	return encode(model.Event{Seq: seq, Type: "stream.reset", ProjectID: projectID, At: time.Now().UTC(),
		Data: map[string]any{"reason": reason, "seq": seq}})
}

// Unsubscribe removes a subscriber.
func (h *Hub) Unsubscribe(sub *Subscriber) {
	h.releaseSlot(sub)
	h.mu.Lock()
	defer h.mu.Unlock()
	if f := h.projects[sub.Principal.ProjectID]; f != nil {
		delete(f.subs, sub)
		if len(f.subs) == 0 {
			delete(h.projects, sub.Principal.ProjectID)
		}
	}
}
