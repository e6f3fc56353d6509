package mcp

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/agentdesk/agentdesk/backend/client"
)

const (
	taskURITemplate = "agentdesk://tasks/{id}"
	taskURIPrefix   = "agentdesk://tasks/"
)

// TaskURI is the resource URI of a task.
func TaskURI(id int64) string { return taskURIPrefix + strconv.FormatInt(id, 10) }

func taskOfURI(uri string) (int64, error) {
	id, err := strconv.ParseInt(strings.TrimPrefix(uri, taskURIPrefix), 10, 64)
	if !strings.HasPrefix(uri, taskURIPrefix) || err != nil || id <= 0 {
		return 0, fmt.Errorf("%q is not a task: task URIs are agentdesk://tasks/{id}", uri)
	}
	return id, nil
}

// readTask serves agentdesk://tasks/{id}: the task as JSON.
func (t *tools) readTask(ctx context.Context, req *mcp.ReadResourceRequest) (*mcp.ReadResourceResult, error) {
	uri := req.Params.URI
	id, err := taskOfURI(uri)
	if err != nil {
		return nil, err
	}
	task, err := t.api.GetTask(ctx, id)
	if client.IsCode(err, "not_found") {
		return nil, mcp.ResourceNotFoundError(uri)
	}
	if err != nil {
		return nil, restError(err)
	}
	text, err := asJSON(task)
	if err != nil {
		return nil, err
	}
	return &mcp.ReadResourceResult{Contents: []*mcp.ResourceContents{{URI: uri, MIMEType: "application/json", Text: text}}}, nil
}

// subscribe accepts a subscription to a task the caller may read, and starts following
// the task changes (once a session): each change of a subscribed task is announced.
func (t *tools) subscribe(ctx context.Context, req *mcp.SubscribeRequest) error {
	id, err := taskOfURI(req.Params.URI)
	if err != nil {
		return err
	}
	if _, err := t.api.GetTask(ctx, id); err != nil {
		return restError(err)
	}
	t.watch.start(func() { go t.announceChanges() })
	return nil
}

// announceChanges tells the subscribers of each changed task, for the session's life;
// the SDK sends only to the sessions subscribed to that task. A broken feed is opened
// again after a pause.
func (t *tools) announceChanges() {
	for t.life.Err() == nil {
		feed, err := t.changes(t.life)
		if err == nil {
			for id := range feed {
				t.server.ResourceUpdated(t.life, &mcp.ResourceUpdatedNotificationParams{URI: TaskURI(id)})
			}
		}
		select {
		case <-t.life.Done():
		case <-time.After(pollEvery):
		}
	}
}

// onceStarter runs a start function once.
type onceStarter struct{ once sync.Once }

func (o *onceStarter) start(fn func()) { o.once.Do(fn) }
