// Command goclient is a third party's program: it drives agentdesk through a client that
// oapi-codegen generates from the server's /api/openapi.json into ./agentdesk (by
// TestGeneratedGoClient, which then runs it against a real server). It uses the typed
// answers only: a field the document did not type would not compile.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"strconv"

	"agentdesk.test/goclient/agentdesk"
)

func main() {
	if err := run(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, "goclient:", err)
		os.Exit(1)
	}
	fmt.Println("ok")
}

func run(ctx context.Context) error {
	agentID, err := strconv.ParseInt(os.Getenv("AGENTDESK_AGENT_ID"), 10, 64)
	if err != nil {
		return fmt.Errorf("AGENTDESK_AGENT_ID: %w", err)
	}
	token := os.Getenv("AGENTDESK_TOKEN")
	c, err := agentdesk.NewClientWithResponses(os.Getenv("AGENTDESK_URL"), agentdesk.WithRequestEditorFn(
		func(_ context.Context, r *http.Request) error {
			r.Header.Set("Authorization", "Bearer "+token)
			return nil
		}))
	if err != nil {
		return err
	}

	// A conversation, then a task linked to it by uuid (conversation_id is an id or a uuid).
	hello := "Can someone summarise the report?"
	conv, err := c.CreateConversationWithResponse(ctx, os.Getenv("AGENTDESK_PROJECT"), nil, agentdesk.CreateConversationRequest{Message: &hello})
	if err != nil || conv.JSON201 == nil {
		return answer("create conversation", conv, err)
	}
	var link agentdesk.CreateTaskRequest_ConversationId
	if err := link.FromCreateTaskRequestConversationId1(conv.JSON201.Uuid.String()); err != nil {
		return err
	}
	steps := []agentdesk.StepInput{{Title: "Read the report"}, {Title: "Write the summary"}}
	created, err := c.CreateTaskWithResponse(ctx, nil, agentdesk.CreateTaskRequest{
		Summary: "Summarise the report", Steps: &steps, AgentId: &agentID, ConversationId: &link})
	if err != nil || created.JSON201 == nil {
		return answer("create task", created, err)
	}
	task := created.JSON201
	if task.Status != agentdesk.TaskStatusTodo || len(task.Steps) != 2 || task.ConversationId == nil || *task.ConversationId != conv.JSON201.Id || task.Conversation == nil {
		return fmt.Errorf("created task: %+v", task)
	}
	fmt.Printf("created task %d (%s), linked to conversation %d\n", task.Id, task.Status, *task.ConversationId)

	// The agent asks; a person answers the current question (If-Match, waiting_version).
	question := "Which customer is it for?"
	etag := created.HTTPResponse.Header.Get("ETag")
	waiting, err := c.SetTaskStatusWithResponse(ctx, task.Id, &agentdesk.SetTaskStatusParams{IfMatch: &etag},
		agentdesk.SetStatusRequest{Status: agentdesk.TaskStatusWaiting, WaitingDetails: &question})
	if err != nil || waiting.JSON200 == nil || !waiting.JSON200.IsWaiting || waiting.JSON200.WaitingVersion != 1 {
		return answer("set Waiting", waiting, err)
	}
	stale, err := c.SetTaskStatusWithResponse(ctx, task.Id, &agentdesk.SetTaskStatusParams{IfMatch: &etag},
		agentdesk.SetStatusRequest{Status: agentdesk.TaskStatusDone})
	if err != nil || stale.JSON412 == nil || stale.JSON412.Error.Code != agentdesk.ErrorCodePreconditionFailed {
		return answer("a stale If-Match", stale, err)
	}
	version, acme := waiting.JSON200.WaitingVersion, "Acme"
	answered, err := c.RespondToTaskWithResponse(ctx, task.Id, nil, agentdesk.RespondToTaskJSONRequestBody{Response: &acme, WaitingVersion: &version})
	if err != nil || answered.JSON200 == nil || answered.JSON200.IsWaiting {
		return answer("respond", answered, err)
	}
	entries := answered.JSON200.Conversation
	if len(entries) == 0 || entries[len(entries)-1].Content != "Acme" {
		return fmt.Errorf("the answer is not in the conversation: %+v", entries)
	}
	fmt.Printf("answered: %s\n", answered.JSON200.Status)

	// Lists page; errors are typed.
	limit := agentdesk.Limit(1)
	page, err := c.ListTasksWithResponse(ctx, &agentdesk.ListTasksParams{Limit: &limit})
	if err != nil || page.JSON200 == nil || len(*page.JSON200) != 1 || (*page.JSON200)[0].Id != task.Id {
		return answer("list one", page, err)
	}
	missing, err := c.GetTaskWithResponse(ctx, 999999, nil)
	if err != nil || missing.JSON404 == nil || missing.JSON404.Error.Code != agentdesk.ErrorCodeNotFound {
		return answer("an unknown task", missing, err)
	}
	fmt.Printf("unknown task: %s: %s\n", missing.JSON404.Error.Code, missing.JSON404.Error.Message)
	return nil
}

// answer describes an unexpected answer.
func answer(what string, r interface {
	StatusCode() int
}, err error) error {
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return fmt.Errorf("%s: unexpected answer %d", what, r.StatusCode())
}
