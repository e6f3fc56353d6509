// Package agentrun is the reference agent behind `agentdesk agent run`: it picks up the
// Todo tasks assigned to it, works through their steps, asks the human when a step
// title ends with "?", and finishes the task Done (or Failed). What to do next is read
// from the task itself on every pass, so the agent can be stopped and restarted at any
// point without redoing or skipping work. A person who mentions it in a conversation
// ("@worker") gets a short reply there.
package agentrun

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/agentdesk/agentdesk/backend/client"
	"github.com/agentdesk/agentdesk/backend/model"
)

// Config is how the agent runs.
type Config struct {
	URL       string        // AGENTDESK_URL
	ProjectID string        // SERVICE_PROJECT_ID
	Digest    string        // SERVICE_API_TOKEN, or SHA-1 of project id + SERVICE_TOKEN_SECRET
	Name      string        // AGENT_NAME
	Namespace string        // SERVICE_NAMESPACE
	Poll      time.Duration // how often to look for work
	Pause     time.Duration // the "work" of one step
	// AnswerWithin is the deadline of each question it asks (0: none): unanswered by
	// then, the task fails.
	AnswerWithin time.Duration
	Log          *slog.Logger
}

// ConfigFromEnv reads the spec's environment variables.
func ConfigFromEnv() (Config, error) {
	cfg := Config{
		URL:       os.Getenv("AGENTDESK_URL"),
		ProjectID: os.Getenv("SERVICE_PROJECT_ID"),
		Digest:    os.Getenv("SERVICE_API_TOKEN"),
		Name:      os.Getenv("AGENT_NAME"),
		Namespace: os.Getenv("SERVICE_NAMESPACE"),
	}
	if cfg.URL == "" {
		cfg.URL = "http://127.0.0.1:8080"
	}
	if cfg.ProjectID == "" {
		return cfg, errors.New("SERVICE_PROJECT_ID is not set; get the environment with: agentdesk agent env --project ID --name NAME")
	}
	if cfg.Digest == "" {
		secret := os.Getenv("SERVICE_TOKEN_SECRET")
		if secret == "" {
			return cfg, errors.New("set SERVICE_API_TOKEN or SERVICE_TOKEN_SECRET; get them with: agentdesk agent env --project ID --name NAME")
		}
		cfg.Digest = client.AgentDigest(cfg.ProjectID, secret)
	}
	return cfg, nil
}

// Agent is a running reference agent.
type Agent struct {
	cfg Config
	api *client.Client
	log *slog.Logger
}

// startWait bounds how long Run waits for a server that does not answer yet.
const startWait = 30 * time.Second

// checkIn asks the server for the agent's tasks: an answer, even a refusal (a wrong
// secret, an unknown agent), ends it; no answer at all is tried again every half
// second until startWait has passed.
func (a *Agent) checkIn(ctx context.Context) error {
	deadline := time.Now().Add(startWait)
	for waited := false; ; waited = true {
		_, err := a.api.ListTasks(ctx, client.ListOptions{AssignedMe: true, Limit: 1})
		var refused *client.Error
		if err == nil || errors.As(err, &refused) || ctx.Err() != nil || time.Now().After(deadline) {
			return err
		}
		if !waited {
			a.log.Info("waiting for agentdesk to answer", "url", a.cfg.URL, "err", err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// New returns an agent for cfg.
func New(cfg Config) *Agent {
	if cfg.Poll <= 0 {
		cfg.Poll = 2 * time.Second
	}
	if cfg.Log == nil {
		cfg.Log = slog.Default()
	}
	return &Agent{cfg: cfg, log: cfg.Log.With("agent", cfg.Name),
		api: client.New(cfg.URL, client.WithAgent(cfg.ProjectID, cfg.Digest, cfg.Name, cfg.Namespace))}
}

// Run works until ctx ends. It checks its credentials first, so that a wrong
// environment fails at once with the server's explanation; a server that does not
// answer yet (started just before, as in the README's quick start) is waited for up to
// startWait. It learns of work from the event stream, and polls every Poll while the
// stream is down (and, as a safety net, every ten Polls while it is up).
func (a *Agent) Run(ctx context.Context) error {
	if err := a.checkIn(ctx); err != nil {
		return fmt.Errorf("cannot reach agentdesk at %s as agent %q: %w", a.cfg.URL, a.cfg.Name, err)
	}
	a.log.Info("agent started", "url", a.cfg.URL, "project", a.cfg.ProjectID, "poll", a.cfg.Poll)
	wake := make(chan struct{}, 1)
	streaming := make(chan bool, 1)
	go a.follow(ctx, wake, streaming)
	interval := a.cfg.Poll
	timer := time.NewTimer(0)
	defer timer.Stop()
	for {
		select {
		case <-ctx.Done():
			a.log.Info("agent stopped")
			return nil
		case up := <-streaming:
			interval = a.cfg.Poll
			if up {
				interval = 10 * a.cfg.Poll
			}
			continue
		case <-wake:
		case <-timer.C:
		}
		if err := a.Pass(ctx); err != nil && ctx.Err() == nil {
			a.log.Warn("pass failed; retrying", "err", err)
		}
		timer.Reset(interval)
	}
}

// follow keeps the event stream open, waking the worker on every task change and
// answering mentions, and reports whether the stream is up. It resumes with since, so nothing is missed.
func (a *Agent) follow(ctx context.Context, wake chan<- struct{}, streaming chan<- bool) {
	since := int64(-1)
	report := func(up bool) {
		select {
		case streaming <- up:
		default:
		}
	}
	for ctx.Err() == nil {
		stream, err := a.api.Events(ctx, since)
		if err != nil {
			a.log.Warn("event stream unavailable; polling", "err", err)
			report(false)
			select {
			case <-ctx.Done():
				return
			case <-time.After(5 * time.Second):
			}
			continue
		}
		a.log.Debug("event stream open", "since", since)
		report(true)
		for {
			e, err := stream.Next()
			if err != nil {
				break
			}
			since = stream.Last
			if e.Type == "message.created" {
				a.answerMention(ctx, e.Data)
			}
			if strings.HasPrefix(e.Type, "task.") || e.Type == "stream.reset" {
				select {
				case wake <- struct{}{}:
				default:
				}
			}
		}
		stream.Close()
		report(false)
	}
}

// answerMention replies in the conversation when a person's new message mentions the
// agent. Messages of agents get no reply, so that two agents never answer each other
// forever.
func (a *Agent) answerMention(ctx context.Context, data json.RawMessage) {
	var m model.Message
	if err := json.Unmarshal(data, &m); err != nil {
		a.log.Warn("unreadable message event", "err", err)
		return
	}
	if m.AuthorType != model.ActorUser || !slices.ContainsFunc(m.Mentions, func(mn model.Mention) bool {
		return mn.Kind == model.ActorAgent && mn.Name == a.cfg.Name
	}) {
		return
	}
	a.log.Info("mentioned; replying", "conversation", m.ConversationID, "message", m.ID, "by", m.Author)
	reply := fmt.Sprintf("Hi %s, %s here: I read your message. I work on the tasks assigned to me; assign me one on the board and I will pick it up.",
		m.Author, a.cfg.Name)
	if _, err := a.api.SendMessage(ctx, "", strconv.FormatInt(m.ConversationID, 10), reply); err != nil && ctx.Err() == nil {
		a.log.Warn("could not reply to a mention", "conversation", m.ConversationID, "err", err)
	}
}

// Pass looks at every task assigned to the agent once and moves each as far as it can.
func (a *Agent) Pass(ctx context.Context) error {
	var after int64
	for {
		page, err := a.api.ListTasks(ctx, client.ListOptions{AssignedMe: true, Limit: 100, AfterID: after})
		if err != nil {
			return err
		}
		for _, t := range page.Tasks {
			if t.Status != model.StatusTodo && t.Status != model.StatusDoing {
				continue // Backlog is not ready, Waiting waits for a human, Done and Failed are over
			}
			if err := a.work(ctx, t.ID); err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				a.fail(ctx, t.ID, err)
			}
		}
		if page.NextAfterID == 0 {
			return nil
		}
		after = page.NextAfterID
	}
}

// work carries one task forward until it waits for a human or ends. Each callback is
// decided from the task as last read (or as the last callback answered it) and sent
// with that version's ETag in If-Match: if a human changed the task meanwhile (moved
// it, answered, reassigned it), the callback is refused and changes nothing, and the
// next pass decides again from the task as it is (fail leaves it alone).
func (a *Agent) work(ctx context.Context, id int64) error {
	t, err := a.api.GetTask(ctx, id)
	if err != nil {
		return err
	}
	callback := func(cb client.Callback) (*client.Task, error) {
		return a.api.AgentCallback(ctx, id, cb, client.IfMatch(t.ETag))
	}
	if t.Status == model.StatusTodo {
		a.log.Info("picked up task", "task", id, "summary", t.Summary)
		if t, err = callback(client.Callback{Status: model.StatusDoing}); err != nil {
			return err
		}
	}
	for t.Status == model.StatusDoing {
		i := t.CurrentStepNum
		if i >= len(t.Steps) {
			a.log.Info("task done", "task", id)
			_, err := callback(client.Callback{Status: model.StatusDone, Message: "All steps are complete."})
			return err
		}
		step := t.Steps[i]
		text, options, question := questionOf(step.Title)
		switch {
		case question && step.Status == model.StepPending:
			// Ask: the step starts and the task waits for the human, in one callback.
			a.log.Info("asking the human", "task", id, "step", i, "question", text, "options", options)
			q := client.Question{Options: options}
			if a.cfg.AnswerWithin > 0 {
				at := time.Now().Add(a.cfg.AnswerWithin)
				q.ExpiresAt, q.OnExpiry = &at, "fail"
			}
			_, err := callback(client.Callback{
				Steps:          []client.StepUpdate{{Index: i, Status: model.StepInProgress}},
				WaitingDetails: text,
				Question:       q,
			})
			return err
		case question:
			// Back in Doing with the question's step started: the answer has come.
			answer := lastUserMessage(t)
			a.log.Info("got an answer", "task", id, "step", i)
			t, err = callback(client.Callback{
				Steps:   []client.StepUpdate{{Index: i, Status: model.StepCompleted}},
				Message: fmt.Sprintf("Thanks, you answered %q to %q. Carrying on.", answer, text),
			})
		default:
			if step.Status == model.StepPending {
				if t, err = callback(client.Callback{Steps: []client.StepUpdate{{Index: i, Status: model.StepInProgress}}}); err != nil {
					return err
				}
			}
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(a.cfg.Pause):
			}
			t, err = callback(client.Callback{Steps: []client.StepUpdate{{Index: i, Status: model.StepCompleted}}})
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// questionOf reads a step's title as a question: one that ends with "?", optionally
// followed by its answers in brackets ("Ship it? [Approve, Reject]"), which become
// buttons for the person.
func questionOf(title string) (text string, options []string, ok bool) {
	text = strings.TrimSpace(title)
	if open := strings.LastIndex(text, " ["); open > 0 && strings.HasSuffix(text, "]") {
		for _, o := range strings.Split(text[open+2:len(text)-1], ",") {
			if o = strings.TrimSpace(o); o != "" {
				options = append(options, o)
			}
		}
		text = strings.TrimSpace(text[:open])
	}
	return text, options, strings.HasSuffix(text, "?")
}

func lastUserMessage(t *client.Task) string {
	for i := len(t.Conversation) - 1; i >= 0; i-- {
		if t.Conversation[i].Role == model.RoleUser {
			return t.Conversation[i].Content
		}
	}
	return ""
}

// fail marks a task Failed with what went wrong, unless the server is unreachable, or
// the task changed while the agent worked on it (then the next pass looks again).
func (a *Agent) fail(ctx context.Context, id int64, cause error) {
	var apiErr *client.Error
	if !errors.As(cause, &apiErr) {
		a.log.Warn("task interrupted; will retry", "task", id, "err", cause)
		return
	}
	if apiErr.Code == client.CodePreconditionFailed {
		a.log.Info("task changed meanwhile; will look at it again", "task", id)
		return
	}
	a.log.Error("task failed", "task", id, "err", cause)
	if _, err := a.api.AgentCallback(ctx, id, client.Callback{Status: model.StatusFailed, Message: "The agent failed: " + apiErr.Message}); err != nil {
		a.log.Error("could not mark the task failed", "task", id, "err", err)
	}
}
