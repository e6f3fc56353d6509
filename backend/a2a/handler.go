package a2a

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"iter"
	"log/slog"
	"net/http"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// RPCHandler serves the JSON-RPC endpoint of the agent named agentName to p, who
// authenticated for the agent's project. The SDK reads the requests and writes the
// answers (SSE for message/stream and tasks/resubscribe); agent answers them.
func RPCHandler(svc *service.Service, hub *events.Hub, p *auth.Principal, agentName string) http.Handler {
	return nullResult(a2asrv.NewJSONRPCHandler(&agent{svc: svc, hub: hub, p: p, name: agentName}))
}

// nullResult answers `"result": null` for a call the SDK answered with nothing at all:
// a2a-go v0.3.3 writes no body for a successful tasks/pushNotificationConfig/delete
// (whose result is void), which JSON-RPC 2.0 forbids and its own client reads as an
// error (EOF).
func nullResult(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(r.Body)
		if err != nil {
			http.Error(w, "reading the request: "+err.Error(), http.StatusBadRequest)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		tw := &trackingWriter{ResponseWriter: w}
		next.ServeHTTP(tw, r)
		if tw.wrote {
			return
		}
		var req struct {
			ID json.RawMessage `json:"id"`
		}
		_ = json.Unmarshal(body, &req)
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"jsonrpc": "2.0", "id": req.ID, "result": nil})
	})
}

// trackingWriter notes whether anything was written through it.
type trackingWriter struct {
	http.ResponseWriter
	wrote bool
}

func (t *trackingWriter) WriteHeader(code int) { t.wrote = true; t.ResponseWriter.WriteHeader(code) }
func (t *trackingWriter) Write(b []byte) (int, error) {
	t.wrote = true
	return t.ResponseWriter.Write(b)
}
func (t *trackingWriter) Flush() {
	if f, ok := t.ResponseWriter.(http.Flusher); ok {
		t.wrote = true
		f.Flush()
	}
}
func (t *trackingWriter) Unwrap() http.ResponseWriter { return t.ResponseWriter }

// agent answers one caller's requests to one agent: a2asrv.RequestHandler over the service.
type agent struct {
	svc  *service.Service
	hub  *events.Hub
	p    *auth.Principal
	name string
}

var _ a2asrv.RequestHandler = (*agent)(nil)

// protocolError is a service error as A2A says it: the service's message, under the
// protocol's error code nearest to its kind (not found, bad params, ...).
func protocolError(err error) error {
	if err == nil {
		return nil
	}
	code, msg := errs.Public(err)
	kind := a2a.ErrServerError // rate limited, disk full, ...: said in the message
	switch code {
	case errs.NotFound:
		kind = a2a.ErrTaskNotFound
	case errs.InvalidArgument, errs.Conflict, errs.PreconditionFailed:
		kind = a2a.ErrInvalidParams
	case errs.Forbidden, errs.Unauthenticated:
		kind = a2a.ErrInvalidRequest
	case errs.Internal:
		slog.Error("a2a request failed", "err", err)
		kind = a2a.ErrInternalError
	}
	return said(msg, kind)
}

// saidError is an A2A error with a message of its own: the SDK sends the message as
// the error's data, under the code of kind.
type saidError struct {
	msg  string
	kind error
}

func (e saidError) Error() string { return e.msg }
func (e saidError) Unwrap() error { return e.kind }

func said(msg string, kind error) error { return saidError{msg, kind} }

func (h *agent) OnGetTask(ctx context.Context, q *a2a.TaskQueryParams) (*a2a.Task, error) {
	id, err := parseTaskID(q.ID)
	if err != nil {
		return nil, err
	}
	t, err := h.svc.A2ATask(ctx, h.p, h.name, id)
	if err != nil {
		return nil, protocolError(err)
	}
	return taskOf(t, q.HistoryLength), nil
}

func (h *agent) OnCancelTask(ctx context.Context, params *a2a.TaskIDParams) (*a2a.Task, error) {
	id, err := parseTaskID(params.ID)
	if err != nil {
		return nil, err
	}
	t, err := h.svc.CancelA2ATask(ctx, h.p, h.name, id)
	if errs.CodeOf(err) == errs.Conflict { // the one conflict of a cancel: a finished task
		_, msg := errs.Public(err)
		return nil, said(msg, a2a.ErrTaskNotCancelable)
	}
	if err != nil {
		return nil, protocolError(err)
	}
	return taskOf(t, nil), nil
}

// send is message/send's work, for both methods: the task the message made or answered,
// and the push notification config the send carries set on it.
func (h *agent) send(ctx context.Context, params *a2a.MessageSendParams) (*model.Task, error) {
	if params.Config != nil && params.Config.PushConfig != nil {
		if err := h.svc.CheckA2APushConfig(ctx, *params.Config.PushConfig); err != nil {
			return nil, protocolError(err)
		}
	}
	text, err := textOf(params.Message)
	if err != nil {
		return nil, err
	}
	in := service.A2AMessage{Text: text, MessageID: params.Message.ID}
	if params.Message.TaskID != "" {
		id, err := parseTaskID(params.Message.TaskID)
		if err != nil {
			return nil, err
		}
		in.TaskID = &id
	}
	t, err := h.svc.SendA2AMessage(ctx, h.p, h.name, in)
	if err != nil {
		return nil, protocolError(err)
	}
	if params.Config != nil && params.Config.PushConfig != nil {
		if _, err := h.svc.SetA2APushConfig(ctx, h.p, h.name, t.ID, *params.Config.PushConfig); err != nil {
			return nil, protocolError(err)
		}
	}
	return t, nil
}

// OnSendMessage answers at once with the task as it now is: agentdesk's agents work on
// their own time (a person may be asked), so a blocking send does not wait for the end.
func (h *agent) OnSendMessage(ctx context.Context, params *a2a.MessageSendParams) (a2a.SendMessageResult, error) {
	t, err := h.send(ctx, params)
	if err != nil {
		return nil, err
	}
	var historyLength *int
	if params.Config != nil {
		historyLength = params.Config.HistoryLength
	}
	return taskOf(t, historyLength), nil
}

func (h *agent) OnSendMessageStream(ctx context.Context, params *a2a.MessageSendParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		changes, err := h.hub.TaskChanges(ctx, h.p) // before the change: no update is missed
		if err != nil {
			yield(nil, protocolError(err))
			return
		}
		t, err := h.send(ctx, params)
		if err != nil {
			yield(nil, err)
			return
		}
		h.follow(ctx, changes, t, yield)
	}
}

func (h *agent) OnResubscribeToTask(ctx context.Context, params *a2a.TaskIDParams) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		id, err := parseTaskID(params.ID)
		if err != nil {
			yield(nil, err)
			return
		}
		changes, err := h.hub.TaskChanges(ctx, h.p)
		if err != nil {
			yield(nil, protocolError(err))
			return
		}
		t, err := h.svc.A2ATask(ctx, h.p, h.name, id)
		if err != nil {
			yield(nil, protocolError(err))
			return
		}
		h.follow(ctx, changes, t, yield)
	}
}

// follow sends task t, then a status update each time its state changes or it asks a
// new question (the result first, as an artifact, when it completes), until the
// exchange ends (service.A2AEnds): completed, failed, or input-required.
func (h *agent) follow(ctx context.Context, changes <-chan int64, t *model.Task, yield func(a2a.Event, error) bool) {
	if !yield(taskOf(t, nil), nil) {
		return
	}
	last := service.A2AViewOf(t)
	question := t.WaitingVersion
	for !service.A2AEnds(last.State) {
		id, ok := <-changes
		if !ok {
			if ctx.Err() == nil { // the feed ended under a live request: the server stops, or the credential ended
				yield(nil, said("the task's updates stopped (the server is stopping, or the credential ended); resubscribe", a2a.ErrServerError))
			}
			return
		}
		if id != t.ID {
			continue
		}
		now, err := h.svc.A2ATask(ctx, h.p, h.name, t.ID)
		if err != nil {
			yield(nil, protocolError(err))
			return
		}
		v := service.A2AViewOf(now)
		if v.State == last.State && now.WaitingVersion == question {
			continue
		}
		if a := artifactOf(v); a != nil {
			if !yield(&a2a.TaskArtifactUpdateEvent{TaskID: taskIDOf(now.ID), ContextID: string(taskIDOf(now.ID)), Artifact: a, LastChunk: true}, nil) {
				return
			}
		}
		update := &a2a.TaskStatusUpdateEvent{TaskID: taskIDOf(now.ID), ContextID: string(taskIDOf(now.ID)),
			Status: statusOf(now, v), Final: service.A2AEnds(v.State)}
		if !yield(update, nil) {
			return
		}
		last, question = v, now.WaitingVersion
	}
}

func (h *agent) OnGetTaskPushConfig(ctx context.Context, params *a2a.GetTaskPushConfigParams) (*a2a.TaskPushConfig, error) {
	id, err := parseTaskID(params.TaskID)
	if err != nil {
		return nil, err
	}
	c, err := h.svc.A2APushConfig(ctx, h.p, h.name, id, params.ConfigID)
	if err != nil {
		return nil, protocolError(err)
	}
	return &a2a.TaskPushConfig{TaskID: params.TaskID, Config: *c}, nil
}

func (h *agent) OnListTaskPushConfig(ctx context.Context, params *a2a.ListTaskPushConfigParams) ([]*a2a.TaskPushConfig, error) {
	id, err := parseTaskID(params.TaskID)
	if err != nil {
		return nil, err
	}
	list, err := h.svc.A2APushConfigs(ctx, h.p, h.name, id)
	if err != nil {
		return nil, protocolError(err)
	}
	out := make([]*a2a.TaskPushConfig, len(list))
	for i, c := range list {
		out[i] = &a2a.TaskPushConfig{TaskID: params.TaskID, Config: *c}
	}
	return out, nil
}

func (h *agent) OnSetTaskPushConfig(ctx context.Context, params *a2a.TaskPushConfig) (*a2a.TaskPushConfig, error) {
	id, err := parseTaskID(params.TaskID)
	if err != nil {
		return nil, err
	}
	c, err := h.svc.SetA2APushConfig(ctx, h.p, h.name, id, params.Config)
	if err != nil {
		return nil, protocolError(err)
	}
	return &a2a.TaskPushConfig{TaskID: params.TaskID, Config: *c}, nil
}

func (h *agent) OnDeleteTaskPushConfig(ctx context.Context, params *a2a.DeleteTaskPushConfigParams) error {
	id, err := parseTaskID(params.TaskID)
	if err != nil {
		return err
	}
	return protocolError(h.svc.DeleteA2APushConfig(ctx, h.p, h.name, id, params.ConfigID))
}

// PushBody is a push notification's body: the task as tasks/get shows it.
func PushBody(t *model.Task) ([]byte, error) { return json.Marshal(taskOf(t, nil)) }

func (h *agent) OnGetExtendedAgentCard(context.Context) (*a2a.AgentCard, error) {
	return nil, a2a.ErrAuthenticatedExtendedCardNotConfigured
}
