package graphql

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/gorilla/websocket"
	gql "github.com/graphql-go/graphql"
	"github.com/graphql-go/graphql/gqlerrors"
	"github.com/graphql-go/graphql/language/ast"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/service"
)

// The graphql-transport-ws protocol (the graphql-ws library's; its PROTOCOL.md) on GET
// /graphql: connection_init (credentials in the payload, or a Bearer header on the
// upgrade) and connection_ack; subscribe, next, error and complete per operation;
// ping and pong. Queries and mutations may be sent too: one next, then complete.

// Subprotocol is the WebSocket subprotocol of GraphQL over WebSocket.
const Subprotocol = "graphql-transport-ws"

// Limits and timings of a GraphQL WebSocket.
const (
	ConnectionInitWait = 10 * time.Second // connection_init must come within this
	MaxOperations      = 100              // operations running at once on one socket
	wsPingEvery        = 25 * time.Second
	wsPongWait         = 60 * time.Second
	wsWriteTimeout     = 10 * time.Second
)

// Close codes of the protocol, and the stream's own for a slow consumer.
const (
	closeBadRequest       = 4400
	closeUnauthorized     = 4401
	closeForbidden        = 4403
	closeSubprotocol      = 4406
	closeInitTimeout      = 4408
	closeSubscriberExists = 4409
	closeTooManyInits     = 4429
	// closeTryAgainLater (RFC 6455's registry: a temporary condition) closes a socket
	// whose credential holds events.MaxSocketsPerCredential already.
	closeTryAgainLater = 1013
)

// wsMessage is one message of the protocol.
type wsMessage struct {
	ID      string          `json:"id,omitempty"`
	Type    string          `json:"type"`
	Payload json.RawMessage `json:"payload,omitempty"`
}

type wsConn struct {
	conn   *websocket.Conn
	svc    *service.Service
	hub    *events.Hub
	schema *gql.Schema
	ctx    context.Context
	cancel context.CancelFunc

	header      *auth.Principal // from the upgrade's Authorization header, if any
	headerWatch *events.Watch   // header's hold on a socket, taken before the upgrade
	pr          *auth.Principal // once acknowledged
	watch       *events.Watch   // pr's credential, checked by the hub while the socket is open
	inited      bool

	writeMu sync.Mutex
	mu      sync.Mutex
	ops     map[string]*wsOp
}

type wsOp struct{ cancel context.CancelFunc }

// serveWS upgrades the request and speaks the protocol until the socket closes, the
// client goes away or the hub closes (server shutdown: close code 1001).
func serveWS(rw http.ResponseWriter, r *http.Request, schema *gql.Schema, svc *service.Service, hub *events.Hub, up *websocket.Upgrader, token TokenFunc) {
	var header *auth.Principal
	var headerWatch *events.Watch
	if r.Header.Get("Authorization") != "" {
		value, err := token(r)
		if err == nil {
			header, err = authenticate(r.Context(), svc, value)
		}
		if err == nil {
			// Counted from now, so that a credential over its number of sockets is
			// refused with a 429 before the upgrade.
			headerWatch, err = hub.Watch(header)
		}
		if err != nil {
			replyError(rw, r, err)
			return
		}
	}
	conn, err := up.Upgrade(rw, r, nil)
	if err != nil {
		if headerWatch != nil {
			hub.Unwatch(headerWatch)
		}
		return // the upgrader has answered (403 for a foreign origin, 400 for a bad handshake)
	}
	ctx, cancel := context.WithCancel(r.Context())
	w := &wsConn{conn: conn, svc: svc, hub: hub, schema: schema, ctx: ctx, cancel: cancel, header: header, headerWatch: headerWatch, ops: map[string]*wsOp{}}
	defer conn.Close()
	defer cancel()
	defer func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for _, watch := range []*events.Watch{w.watch, w.headerWatch} {
			if watch != nil {
				hub.Unwatch(watch)
			}
		}
	}()
	if conn.Subprotocol() != Subprotocol {
		w.close(closeSubprotocol, "Subprotocol not acceptable: use "+Subprotocol)
		return
	}
	go w.keepalive()
	w.read()
}

// keepalive pings the client, and closes the socket when the server shuts down.
func (w *wsConn) keepalive() {
	ping := time.NewTicker(wsPingEvery)
	defer ping.Stop()
	initTimer := time.NewTimer(ConnectionInitWait)
	defer initTimer.Stop()
	for {
		select {
		case <-w.ctx.Done():
			return
		case <-w.hub.Closing():
			w.close(websocket.CloseGoingAway, "server shutting down; reconnect and subscribe again with since: the last seq")
			return
		case <-initTimer.C:
			w.mu.Lock()
			acked := w.pr != nil
			w.mu.Unlock()
			if !acked {
				w.close(closeInitTimeout, "Connection initialisation timeout")
				return
			}
		case <-ping.C:
			if w.conn.WriteControl(websocket.PingMessage, nil, time.Now().Add(wsWriteTimeout)) != nil {
				w.cancel()
				return
			}
		}
	}
}

// guard closes the socket with 4401 once the credential it was acknowledged with no
// longer authenticates (revoked, rotated, expired, agent deleted): its subscriptions,
// queries and mutations end with it.
func (w *wsConn) guard(watch *events.Watch) {
	select {
	case <-w.ctx.Done():
	case <-watch.Ended():
		w.close(closeUnauthorized, "Unauthorized: credentials ended: "+watch.Reason())
	}
}

// close sends a close frame and ends the connection.
func (w *wsConn) close(code int, reason string) {
	if len(reason) > 123 { // the most a close frame carries
		reason = reason[:120]
		for !utf8.ValidString(reason) {
			reason = reason[:len(reason)-1]
		}
		reason += "..."
	}
	_ = w.conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(code, reason), time.Now().Add(time.Second))
	w.cancel()
	_ = w.conn.Close() // ends the read loop
}

func (w *wsConn) send(m any) {
	raw, err := json.Marshal(m)
	if err != nil {
		slog.Error("graphql ws: encode message", "err", err)
		return
	}
	w.mu.Lock()
	watch := w.watch
	w.mu.Unlock()
	w.writeMu.Lock()
	defer w.writeMu.Unlock()
	if w.ctx.Err() != nil || (watch != nil && watch.Reason() != "") {
		return // nothing more once the credential ended: guard closes the socket
	}
	_ = w.conn.SetWriteDeadline(time.Now().Add(wsWriteTimeout))
	if err := w.conn.WriteMessage(websocket.TextMessage, raw); err != nil {
		w.cancel()
		_ = w.conn.Close()
	}
}

func (w *wsConn) read() {
	w.conn.SetReadLimit(MaxBodyBytes)
	_ = w.conn.SetReadDeadline(time.Now().Add(wsPongWait))
	w.conn.SetPongHandler(func(string) error { return w.conn.SetReadDeadline(time.Now().Add(wsPongWait)) })
	for {
		typ, raw, err := w.conn.ReadMessage()
		if err != nil {
			if errors.Is(err, websocket.ErrReadLimit) {
				w.close(websocket.CloseMessageTooBig, fmt.Sprintf("message over %d bytes", MaxBodyBytes))
			}
			return
		}
		_ = w.conn.SetReadDeadline(time.Now().Add(wsPongWait))
		var m wsMessage
		if typ != websocket.TextMessage || json.Unmarshal(raw, &m) != nil || m.Type == "" {
			w.close(closeBadRequest, "Invalid message received: send JSON text messages with a type")
			return
		}
		if !w.handle(m) {
			return
		}
	}
}

// handle acts on one message; false when the socket was closed.
func (w *wsConn) handle(m wsMessage) bool {
	switch m.Type {
	case "connection_init":
		if w.inited {
			w.close(closeTooManyInits, "Too many initialisation requests")
			return false
		}
		w.inited = true
		pr, watch, err := w.authenticate(m.Payload)
		if errs.CodeOf(err) == errs.RateLimited {
			_, msg := errs.Public(err)
			w.close(closeTryAgainLater, "Try again later: "+msg)
			return false
		}
		if err != nil {
			_, msg := errs.Public(err)
			w.close(closeForbidden, "Forbidden: "+msg)
			return false
		}
		w.mu.Lock()
		w.pr, w.watch = pr, watch
		w.mu.Unlock()
		go w.guard(watch)
		w.send(wsMessage{Type: "connection_ack"})
	case "ping":
		w.send(wsMessage{Type: "pong", Payload: m.Payload})
	case "pong":
	case "subscribe":
		if w.pr == nil {
			w.close(closeUnauthorized, "Unauthorized: send connection_init first and wait for connection_ack")
			return false
		}
		if m.ID == "" {
			w.close(closeBadRequest, "Invalid message received: subscribe needs an id")
			return false
		}
		var req Request
		if json.Unmarshal(m.Payload, &req) != nil {
			w.close(closeBadRequest, "Invalid message received: the subscribe payload must be an object with query, variables and operationName")
			return false
		}
		w.mu.Lock()
		_, exists := w.ops[m.ID]
		n := len(w.ops)
		w.mu.Unlock()
		if exists {
			w.close(closeSubscriberExists, "Subscriber for "+m.ID+" already exists")
			return false
		}
		if n >= MaxOperations {
			w.sendErrors(m.ID, []gqlerrors.FormattedError{gqlError(errs.RateLimited, fmt.Sprintf("at most %d operations may run at once on one socket; complete one first", MaxOperations))})
			return true
		}
		w.start(m.ID, req)
	case "complete":
		w.mu.Lock()
		op := w.ops[m.ID]
		delete(w.ops, m.ID)
		w.mu.Unlock()
		if op != nil {
			op.cancel()
		}
	default:
		w.close(closeBadRequest, fmt.Sprintf("Invalid message received: unknown type %q", m.Type))
		return false
	}
	return true
}

// authenticate finds the caller and its hold on the socket: the connection_init
// payload's credentials ({"Authorization": "Bearer adk_..."} or {"token": "adk_..."}),
// else the upgrade's header (whose hold was taken before the upgrade). A credential
// over MaxSocketsPerCredential gives a rate_limited error.
func (w *wsConn) authenticate(payload json.RawMessage) (*auth.Principal, *events.Watch, error) {
	var creds map[string]any
	if len(payload) > 0 && string(payload) != "null" {
		if json.Unmarshal(payload, &creds) != nil {
			return nil, nil, errs.Unauth("the connection_init payload must be an object, e.g. {\"Authorization\": \"Bearer <token>\"}")
		}
	}
	c := service.Credentials{Where: service.WhereGraphQL, Address: service.ClientAddress(w.ctx)}
	for _, k := range []string{"Authorization", "authorization"} {
		if v, ok := creds[k].(string); ok {
			c.Authorization = v
		}
	}
	c.Token, _ = creds["token"].(string)
	w.mu.Lock()
	headerWatch := w.headerWatch
	w.headerWatch = nil // used below, or released: the payload's credential counts instead
	w.mu.Unlock()
	if c.Authorization == "" && c.Token == "" && w.header != nil {
		return w.header, headerWatch, nil
	}
	if headerWatch != nil {
		w.hub.Unwatch(headerWatch)
	}
	pr, err := w.svc.Authenticate(w.ctx, c)
	if err != nil {
		return nil, nil, err
	}
	watch, err := w.hub.Watch(pr)
	return pr, watch, err
}

func (w *wsConn) sendErrors(id string, list []gqlerrors.FormattedError) {
	raw, _ := json.Marshal(errorList(list)) // no "locations": null
	w.send(wsMessage{ID: id, Type: "error", Payload: raw})
}

func (w *wsConn) sendNext(ctx context.Context, id string, res *gql.Result) {
	body := response{Data: &res.Data, Errors: wsExecutionErrors(ctx, res.Errors)}
	raw, err := json.Marshal(body)
	if err != nil {
		raw, _ = json.Marshal(response{Errors: []gqlerrors.FormattedError{gqlError(errs.Internal, "internal error; the server log has the details")}})
	}
	w.send(wsMessage{ID: id, Type: "next", Payload: raw})
}

// wsExecutionErrors gives every error a code: a subscription's source function error
// reaches us without the extensions graphql-go keeps for resolvers.
func wsExecutionErrors(ctx context.Context, list []gqlerrors.FormattedError) []gqlerrors.FormattedError {
	for i := range list {
		var coded *codedError
		if list[i].Extensions == nil && errors.As(list[i].OriginalError(), &coded) {
			list[i].Extensions = coded.Extensions()
		}
	}
	return executionErrors(ctx, list)
}

// start checks an operation (parse, limits, validation) and runs it. A subscription is
// registered with the event hub before start returns, so a change made after the client
// sees the answer to any later message on the socket reaches the subscription.
func (w *wsConn) start(id string, req Request) {
	if strings.TrimSpace(req.Query) == "" {
		w.sendErrors(id, []gqlerrors.FormattedError{gqlError(errs.InvalidArgument, "query is required")})
		return
	}
	if len(req.Query) > MaxQueryBytes {
		w.sendErrors(id, []gqlerrors.FormattedError{gqlError(errs.PayloadTooLarge, fmt.Sprintf("the query is %d bytes, at most %d are allowed", len(req.Query), MaxQueryBytes))})
		return
	}
	doc, list := checkRequest(w.schema, req.Query, req.Variables) // handler.go
	if list != nil {
		w.sendErrors(id, list)
		return
	}
	op := operation(doc, req.OperationName)
	if op == nil {
		w.sendErrors(id, []gqlerrors.FormattedError{gqlError(errs.InvalidArgument, "no operation to run: name one of the document's operations in operationName")})
		return
	}
	isSub := op.Operation == ast.OperationTypeSubscription
	if isSub && (op.SelectionSet == nil || len(op.SelectionSet.Selections) != 1) {
		w.sendErrors(id, []gqlerrors.FormattedError{gqlError(errs.InvalidArgument, "a subscription selects exactly one field")})
		return
	}

	ctx, cancel := context.WithCancel(w.ctx)
	entry := &wsOp{cancel: cancel}
	w.mu.Lock()
	w.ops[id] = entry
	pr := w.pr
	w.mu.Unlock()
	finish := func(sendComplete bool) {
		w.mu.Lock()
		mine := w.ops[id] == entry
		if mine {
			delete(w.ops, id)
		}
		w.mu.Unlock()
		cancel()
		if mine && sendComplete { // not after the client's own complete
			w.send(wsMessage{ID: id, Type: "complete"})
		}
	}
	ctx, loader := withAgentLoader(WithPrincipal(ctx, pr), w.svc, pr)
	ctx = platformContext(ctx, "", w.svc, pr, !isSub) // activity.go
	params := gql.ExecuteParams{Schema: *w.schema, AST: doc, OperationName: req.OperationName, Args: req.Variables, Context: ctx}
	if !isSub {
		go func() {
			res := gql.Execute(params)
			if ctx.Err() == nil {
				w.sendNext(ctx, id, res)
			}
			finish(true)
		}()
		return
	}

	ready := make(chan struct{})
	var once sync.Once
	signal := func() { once.Do(func() { close(ready) }) }
	params.Context = withEnv(ctx, &subscriptionEnv{
		hub:   w.hub,
		watch: w.watch,
		ready: signal,
		slow: func(last int64) {
			w.close(events.CloseSlowConsumer, fmt.Sprintf("too slow: fell behind the stream; subscribe again with since: %d", last))
		},
		fresh: loader.reset,
	})
	results := gql.ExecuteSubscription(params)
	go func() {
		defer signal()
		first := true
		for res := range results { // read to the end: graphql-go blocks until its results are taken
			if first {
				signal()
				first = false
			}
			if ctx.Err() == nil {
				w.sendNext(ctx, id, res)
			}
		}
		finish(true)
	}()
	select {
	case <-ready:
	case <-w.ctx.Done():
	}
}

// operation finds the operation to run, as graphql-go will.
func operation(doc *ast.Document, name string) *ast.OperationDefinition {
	var found *ast.OperationDefinition
	for _, d := range doc.Definitions {
		op, ok := d.(*ast.OperationDefinition)
		if !ok {
			continue
		}
		if name == "" {
			if found != nil {
				return nil // several: a name is needed
			}
			found = op
		} else if op.Name != nil && op.Name.Value == name {
			return op
		}
	}
	return found
}
