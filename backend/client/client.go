// Package client is the Go SDK for agentdesk's REST API: typed, context-aware, with
// Bearer token or agent-header authentication. The tests and the reference agent use it.
//
//	c := client.New("http://127.0.0.1:8080", client.WithToken(os.Getenv("AGENTDESK_TOKEN")))
//	task, err := c.CreateTask(ctx, client.NewTask{Summary: "Write the notes"})
//
// Agents authenticate with their project's digest instead:
//
//	c := client.New(url, client.WithAgent(projectID, client.AgentDigest(projectID, secret), "worker", namespace))
package client

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/model"
)

// Task is a task as the API returns it.
type Task = model.Task

// Step is one step of a task.
type Step = model.Step

// TaskMessage is one entry of a task's conversation.
type TaskMessage = model.TaskMessage

// Client calls one agentdesk server.
type Client struct {
	base      string
	http      *http.Client
	token     string
	projectID string // agent authentication
	digest    string
	agentName string
	namespace string
}

// Option configures a Client.
type Option func(*Client)

// WithToken authenticates as a user with a platform token.
func WithToken(token string) Option { return func(c *Client) { c.token = token } }

// WithAgent authenticates as an agent: digest is SERVICE_API_TOKEN, or
// AgentDigest(projectID, SERVICE_TOKEN_SECRET).
func WithAgent(projectID, digest, agentName, namespace string) Option {
	return func(c *Client) {
		c.projectID, c.digest, c.agentName, c.namespace = projectID, digest, agentName, namespace
	}
}

// WithHTTPClient replaces the default HTTP client (30 s timeout).
func WithHTTPClient(h *http.Client) Option { return func(c *Client) { c.http = h } }

// AgentDigest is the X-Task-Authorization value: hex SHA-1 of project id + secret.
func AgentDigest(projectID, secret string) string { return auth.AgentDigest(projectID, secret) }

// New returns a client of the server at baseURL, such as http://127.0.0.1:8080.
func New(baseURL string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), http: &http.Client{Timeout: 30 * time.Second}}
	for _, o := range opts {
		o(c)
	}
	return c
}

// ProjectID is the project an agent client authenticates for ("" for token clients).
func (c *Client) ProjectID() string { return c.projectID }

// Me is who the credentials are: GET /api/me.
type Me struct {
	Via     string   `json:"via"` // token, agent, session, desktop
	Scopes  []string `json:"scopes"`
	Project struct {
		ID   string `json:"id"`
		Name string `json:"name"`
	} `json:"project"`
	Agent *struct { // agents only
		ID   int64  `json:"id"`
		Name string `json:"name"`
	} `json:"agent"`
}

// Me says who the client's credentials are: their project, scopes, and (agents) agent.
func (c *Client) Me(ctx context.Context) (*Me, error) {
	var out Me
	_, err := c.do(ctx, "GET", "/api/me", nil, &out, func(r *http.Request) {
		if c.token == "" && c.projectID != "" {
			r.Header.Set("X-Agentdesk-Project", c.projectID) // agents name their project here
		}
	})
	return &out, err
}

// Error is an error answer of the API.
type Error struct {
	Status  int    // HTTP status
	Code    string // invalid_argument, unauthenticated, forbidden, not_found, conflict, ...
	Message string
}

func (e *Error) Error() string {
	return fmt.Sprintf("agentdesk: %d %s: %s", e.Status, e.Code, e.Message)
}

// IsCode reports whether err is an API error with the given code.
func IsCode(err error, code string) bool {
	e, ok := err.(*Error)
	return ok && e.Code == code
}

// RequestOption adjusts one request.
type RequestOption func(*http.Request)

// IdempotencyKey makes a create, respond or callback safe to retry.
func IdempotencyKey(key string) RequestOption {
	return func(r *http.Request) { r.Header.Set("Idempotency-Key", key) }
}

// CodePreconditionFailed is the error code of a change refused because the task changed
// since it was read (IfMatch): read it again and decide anew.
const CodePreconditionFailed = "precondition_failed"

// IfMatch makes a change of one task (status, agent, step status, respond, callback,
// delete) conditional: it is made only if the task is still as the client read it,
// etag being the Task.ETag of that read (GetTask, or the answer of the last change).
// Otherwise the change fails with CodePreconditionFailed and nothing changes. An empty
// etag (unknown) sends nothing.
func IfMatch(etag string) RequestOption {
	return func(r *http.Request) {
		if etag != "" {
			r.Header.Set("If-Match", etag)
		}
	}
}

// do sends a request with a JSON body (or none) and decodes a JSON answer into out.
func (c *Client) do(ctx context.Context, method, path string, body, out any, opts ...RequestOption) (http.Header, error) {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.base+path, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	c.authenticate(req)
	for _, o := range opts {
		o(req)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return resp.Header, decodeError(resp)
	}
	if out != nil && resp.StatusCode != http.StatusNoContent {
		if err := decodeJSON(resp.Body, out); err != nil {
			return resp.Header, fmt.Errorf("agentdesk: decode %s %s: %w", method, path, err)
		}
		if task, ok := out.(*Task); ok {
			task.ETag = resp.Header.Get("ETag") // not in the JSON; for IfMatch
		}
	}
	return resp.Header, nil
}

func (c *Client) authenticate(req *http.Request) {
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
		return
	}
	if c.digest != "" {
		req.Header.Set("X-Task-Authorization", c.digest)
		req.Header.Set("X-Agent-Name", c.agentName)
		if c.namespace != "" {
			req.Header.Set("X-Task-Namespace", c.namespace)
		}
	}
}

func decodeJSON(r io.Reader, out any) error { return json.NewDecoder(r).Decode(out) }

func decodeError(resp *http.Response) error {
	var body struct {
		Error struct{ Code, Message string } `json:"error"`
	}
	raw, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if json.Unmarshal(raw, &body) != nil || body.Error.Code == "" {
		return &Error{Status: resp.StatusCode, Code: "unknown", Message: strings.TrimSpace(string(raw))}
	}
	return &Error{Status: resp.StatusCode, Code: body.Error.Code, Message: body.Error.Message}
}

// tasksPath is where this client lists and reads tasks: the project path for agents.
func (c *Client) tasksPath() string {
	if c.token == "" && c.projectID != "" {
		return "/api/projects/" + url.PathEscape(c.projectID) + "/tasks"
	}
	return "/api/tasks"
}

// NewTask is a task to create.
type NewTask struct {
	Summary        string   `json:"summary"`
	Details        string   `json:"details,omitempty"`
	Steps          []string `json:"-"`
	AgentID        *int64   `json:"agent_id,omitempty"`
	TaskType       string   `json:"taskType,omitempty"`
	ConversationID string   `json:"conversation_id,omitempty"`
}

// CreateTask creates a task.
func (c *Client) CreateTask(ctx context.Context, t NewTask, opts ...RequestOption) (*Task, error) {
	type step struct {
		Title string `json:"title"`
	}
	body := struct {
		NewTask
		Steps []step `json:"steps,omitempty"`
	}{NewTask: t}
	for _, s := range t.Steps {
		body.Steps = append(body.Steps, step{s})
	}
	var out Task
	_, err := c.do(ctx, "POST", c.tasksPath(), body, &out, opts...)
	return &out, err
}

// ListOptions filter and page a task list. Zero values mean no filter; Limit 0 lists all.
type ListOptions struct {
	Status     string
	AgentID    int64
	AssignedMe bool // agents: only the tasks assigned to this agent
	Limit      int
	AfterID    int64
}

// TaskPage is one page of tasks; NextAfterID is 0 on the last page.
type TaskPage struct {
	Tasks       []Task
	NextAfterID int64
}

// ListTasks lists tasks, oldest first.
func (c *Client) ListTasks(ctx context.Context, o ListOptions) (*TaskPage, error) {
	q := url.Values{}
	if o.Status != "" {
		q.Set("status", o.Status)
	}
	if o.AgentID != 0 {
		q.Set("agent_id", strconv.FormatInt(o.AgentID, 10))
	}
	if o.AssignedMe {
		q.Set("assigned", "me")
	}
	if o.Limit > 0 {
		q.Set("limit", strconv.Itoa(o.Limit))
	}
	if o.AfterID > 0 {
		q.Set("after_id", strconv.FormatInt(o.AfterID, 10))
	}
	path := c.tasksPath()
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	page := &TaskPage{}
	h, err := c.do(ctx, "GET", path, nil, &page.Tasks)
	if err != nil {
		return nil, err
	}
	if h.Get("Link") != "" && len(page.Tasks) > 0 {
		page.NextAfterID = page.Tasks[len(page.Tasks)-1].ID
	}
	return page, nil
}

// GetTask reads one task with its conversation, and its ETag (for IfMatch).
func (c *Client) GetTask(ctx context.Context, id int64) (*Task, error) {
	var out Task
	_, err := c.do(ctx, "GET", c.tasksPath()+"/"+strconv.FormatInt(id, 10), nil, &out)
	return &out, err
}

// SetStatus moves a task to a status; waitingDetails applies to Waiting ("" for none).
func (c *Client) SetStatus(ctx context.Context, id int64, status, waitingDetails string, opts ...RequestOption) (*Task, error) {
	body := map[string]string{"status": status}
	if waitingDetails != "" {
		body["waiting_details"] = waitingDetails
	}
	var out Task
	_, err := c.do(ctx, "PUT", "/api/tasks/"+strconv.FormatInt(id, 10)+"/status", body, &out, opts...)
	return &out, err
}

// AssignAgent assigns a task to an agent, or unassigns it with nil.
func (c *Client) AssignAgent(ctx context.Context, id int64, agentID *int64, opts ...RequestOption) (*Task, error) {
	var out Task
	_, err := c.do(ctx, "PUT", "/api/tasks/"+strconv.FormatInt(id, 10)+"/agent", map[string]*int64{"agent_id": agentID}, &out, opts...)
	return &out, err
}

// SetStepStatus sets step stepNum (0-based) to pending, in_progress, completed or skipped.
func (c *Client) SetStepStatus(ctx context.Context, id int64, stepNum int, status string, opts ...RequestOption) (*Task, error) {
	var out Task
	_, err := c.do(ctx, "PUT", fmt.Sprintf("/api/tasks/%d/steps/%d/status", id, stepNum), map[string]string{"status": status}, &out, opts...)
	return &out, err
}

// Question is what a question asks beyond its text: options to pick from or a form
// (a JSON object schema), a deadline and what happens then, the person asked. Every
// field is optional; the server checks them.
type Question struct {
	Options   []string        `json:"waiting_options,omitempty"`
	Schema    json.RawMessage `json:"waiting_schema,omitempty"`
	ExpiresAt *time.Time      `json:"waiting_expires_at,omitempty"`
	OnExpiry  string          `json:"waiting_on_expiry,omitempty"` // fail or default
	Default   json.RawMessage `json:"waiting_default,omitempty"`
	Ask       string          `json:"waiting_ask,omitempty"` // an email
}

// Ask puts a task in Waiting on a question: its text and its structure.
func (c *Client) Ask(ctx context.Context, id int64, waitingDetails string, q Question, opts ...RequestOption) (*Task, error) {
	body := struct {
		Status         string `json:"status"`
		WaitingDetails string `json:"waiting_details"`
		Question
	}{model.StatusWaiting, waitingDetails, q}
	var out Task
	_, err := c.do(ctx, "PUT", "/api/tasks/"+strconv.FormatInt(id, 10)+"/status", body, &out, opts...)
	return &out, err
}

// Respond answers a Waiting task with text. waitingVersion, if not 0, must be the
// task's current waiting_version, so that an answer never lands on a newer question.
func (c *Client) Respond(ctx context.Context, id int64, response string, waitingVersion int64, opts ...RequestOption) (*Task, error) {
	return c.Answer(ctx, id, Answer{Response: response}, waitingVersion, opts...)
}

// Answer is an answer to a question: text, one of its options, or its form's fields.
type Answer struct {
	Response string         `json:"response,omitempty"`
	Choice   string         `json:"choice,omitempty"`
	Data     map[string]any `json:"data,omitempty"`
}

// Answer answers a Waiting task, as Respond does, with text, a choice or data.
func (c *Client) Answer(ctx context.Context, id int64, a Answer, waitingVersion int64, opts ...RequestOption) (*Task, error) {
	body := struct {
		Answer
		WaitingVersion int64 `json:"waiting_version,omitempty"`
	}{a, waitingVersion}
	var out Task
	_, err := c.do(ctx, "POST", "/api/tasks/"+strconv.FormatInt(id, 10)+"/respond", body, &out, opts...)
	return &out, err
}

// CommentTask adds an entry to a task's conversation without changing anything else.
func (c *Client) CommentTask(ctx context.Context, id int64, content string, opts ...RequestOption) (*Task, error) {
	var out Task
	_, err := c.do(ctx, "POST", "/api/tasks/"+strconv.FormatInt(id, 10)+"/comments", map[string]string{"content": content}, &out, opts...)
	return &out, err
}

// DeleteTask deletes a task.
func (c *Client) DeleteTask(ctx context.Context, id int64, opts ...RequestOption) error {
	_, err := c.do(ctx, "DELETE", "/api/tasks/"+strconv.FormatInt(id, 10), nil, nil, opts...)
	return err
}

// DeleteDoneTasks deletes every Done task of the project and returns how many.
func (c *Client) DeleteDoneTasks(ctx context.Context) (int, error) {
	var out struct{ Deleted int }
	_, err := c.do(ctx, "DELETE", "/api/tasks/done", nil, &out)
	return out.Deleted, err
}

// StepUpdate is one step change of a callback.
type StepUpdate struct {
	Index  int    `json:"index"`
	Status string `json:"status"`
}

// Callback is an agent's report on its task; every field is optional.
type Callback struct {
	Status         string       `json:"status,omitempty"`
	Steps          []StepUpdate `json:"steps,omitempty"`
	WaitingDetails string       `json:"waiting_details,omitempty"`
	Question                    // with WaitingDetails: the question's structure
	Message        string       `json:"message,omitempty"`
}

// AgentCallback reports progress on a task assigned to this agent; it is applied
// atomically. Requires agent authentication.
func (c *Client) AgentCallback(ctx context.Context, id int64, cb Callback, opts ...RequestOption) (*Task, error) {
	body := struct {
		ProjectID string `json:"project_id"`
		Callback
	}{c.projectID, cb}
	var out Task
	_, err := c.do(ctx, "POST", "/api/agent_callback/"+strconv.FormatInt(id, 10), body, &out, opts...)
	return &out, err
}
