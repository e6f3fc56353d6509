package a2a

import (
	"cmp"
	"context"
	"errors"
	"iter"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"

	"github.com/agentdesk/agentdesk/backend/service"
)

// RunRemoteTask makes one attempt at what task taskID, assigned to a remote A2A agent,
// waits for, with a2a-go's client: the message in its outbox (the request, or a
// person's answer) sent with message/stream (message/send when the agent does not
// stream), or, with none, where the remote task is (tasks/resubscribe, or tasks/get).
// Each event goes to the service (ApplyRemoteEvent); a failure is recorded on the task
// (RemoteAttemptFailed), an answer that ends while the agent works is asked again later.
func RunRemoteTask(ctx context.Context, svc *service.Service, projectID string, taskID int64) error {
	at, err := svc.RemoteAttemptFor(ctx, projectID, taskID)
	if err != nil || at == nil {
		return err
	}
	attemptCtx, cancel := context.WithTimeout(ctx, at.Timeout)
	defer cancel()
	events, err := remoteEvents(attemptCtx, at)
	if err != nil {
		return svc.RemoteAttemptFailed(ctx, projectID, taskID, service.DescribeRemoteError(err))
	}
	heard := false
	for ev, err := range events {
		if ctx.Err() != nil {
			return ctx.Err() // stopping: the attempt does not count
		}
		if err != nil {
			if heard && errors.Is(attemptCtx.Err(), context.DeadlineExceeded) {
				break // the agent works on: ask again later
			}
			return svc.RemoteAttemptFailed(ctx, projectID, taskID, service.DescribeRemoteError(err))
		}
		heard = true
		ends, err := svc.ApplyRemoteEvent(ctx, projectID, taskID, at.OutboxID, ev)
		if err != nil || ends {
			return err
		}
	}
	if !heard {
		return svc.RemoteAttemptFailed(ctx, projectID, taskID, "it answered nothing")
	}
	return svc.RemoteAttemptUnfinished(ctx, projectID, taskID)
}

// remoteEvents starts the attempt's request: what the agent says, event by event.
func remoteEvents(ctx context.Context, at *service.RemoteAttempt) (iter.Seq2[a2a.Event, error], error) {
	// At the endpoint registration checked: given the whole card, a2a-go's client finds
	// no transport in one that names no preferred transport (JSON-RPC, A2A's default).
	endpoint := a2a.AgentInterface{URL: service.JSONRPCEndpoint(at.Card), Transport: a2a.TransportProtocolJSONRPC}
	client, err := a2aclient.NewFromEndpoints(ctx, []a2a.AgentInterface{endpoint},
		a2aclient.WithJSONRPCTransport(at.Client),
		a2aclient.WithConfig(a2aclient.Config{Polling: true}), // a send answers at once; the task is followed after
		a2aclient.WithInterceptors(credentialOf(at)))
	if err != nil {
		return nil, err
	}
	streams := at.Card.Capabilities.Streaming
	if at.Outbox != "" {
		msg := a2a.NewMessage(a2a.MessageRoleUser, a2a.TextPart{Text: at.Outbox})
		msg.ID, msg.TaskID, msg.ContextID = at.OutboxID, a2a.TaskID(at.RemoteTaskID), at.ContextID
		params := &a2a.MessageSendParams{Message: msg}
		if streams {
			return client.SendStreamingMessage(ctx, params), nil
		}
		return one(client.SendMessage(ctx, params)), nil
	}
	id := a2a.TaskID(at.RemoteTaskID)
	if streams {
		return client.ResubscribeToTask(ctx, &a2a.TaskIDParams{ID: id}), nil
	}
	return one(client.GetTask(ctx, &a2a.TaskQueryParams{ID: id})), nil
}

// one is a single answer as a sequence of events.
func one[E a2a.Event](ev E, err error) iter.Seq2[a2a.Event, error] {
	return func(yield func(a2a.Event, error) bool) {
		if err != nil {
			yield(nil, err)
			return
		}
		yield(ev, nil)
	}
}

// credentialOf sends the remote agent its credential: a bearer token as Authorization,
// an API key in the header the card's apiKey scheme names (X-API-Key without one).
func credentialOf(at *service.RemoteAttempt) a2aclient.CallInterceptor {
	return credentialInterceptor{at: at}
}

type credentialInterceptor struct {
	a2aclient.PassthroughInterceptor
	at *service.RemoteAttempt
}

func (c credentialInterceptor) Before(ctx context.Context, req *a2aclient.Request) (context.Context, error) {
	switch c.at.CredentialKind {
	case service.CredentialBearer:
		req.Meta["Authorization"] = []string{"Bearer " + c.at.Credential}
	case service.CredentialAPIKey:
		header := ""
		for _, scheme := range c.at.Card.SecuritySchemes {
			if k, ok := scheme.(a2a.APIKeySecurityScheme); ok && k.In == a2a.APIKeySecuritySchemeInHeader {
				header = k.Name
				break
			}
		}
		req.Meta[cmp.Or(header, "X-API-Key")] = []string{c.at.Credential}
	}
	return ctx, nil
}
