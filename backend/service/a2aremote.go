package service

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Remote A2A agents: an administrator registers one by its Agent Card URL; it becomes an
// agent of the project (an agents row, so tasks are assigned to it as to any agent) with
// its card and credential beside it (store.RemoteAgent). A task assigned to it is queued
// in the same write (its request in the task's outbox); the sender (backend/jobs, with
// backend/a2a's client) sends it and applies what comes back here: the remote task's
// states through StatusOfA2AState, its question as the task's Waiting question, its
// messages and artifacts to the conversation. A person's answer is queued the same way.
// Every failure is written to the task's conversation; after the last retry the task
// fails.

// Bounds and timing of the remote agents.
var (
	// RemoteCardTimeout bounds fetching an Agent Card; RemoteCardMaxBytes its size.
	RemoteCardTimeout  = 10 * time.Second
	RemoteCardMaxBytes = int64(256 << 10)
	// RemoteAttemptTimeout bounds one attempt at a remote agent: a send and what it
	// streams back (a stream still open then is asked again RemotePoll later).
	RemoteAttemptTimeout = 2 * time.Minute
	// RemotePoll is how soon a remote task still being worked on is asked again.
	RemotePoll = 10 * time.Second
	// RemoteBackoff is the wait after each failed attempt; after the last, the task fails.
	RemoteBackoff = []time.Duration{5 * time.Second, 30 * time.Second, 2 * time.Minute, 10 * time.Minute, 30 * time.Minute}
)

// Credential kinds of a remote agent: what agentdesk sends it.
const (
	CredentialNone   = ""
	CredentialBearer = "bearer" // Authorization: Bearer <credential>
	CredentialAPIKey = "apikey" // the header the card's apiKey scheme names (X-API-Key without one)
)

// MaxRemoteCredentialLen bounds a remote agent's credential.
const MaxRemoteCredentialLen = 4096

// wakeUp is a wake-up signal for a background loop: one pending value at most.
type wakeUp struct {
	once sync.Once
	ch   chan struct{}
}

func (w *wakeUp) c() chan struct{} {
	w.once.Do(func() { w.ch = make(chan struct{}, 1) })
	return w.ch
}

func (w *wakeUp) wake() {
	select {
	case w.c() <- struct{}{}:
	default:
	}
}

// RemoteTasksChanged receives a value when a message was queued for a remote agent.
func (s *Service) RemoteTasksChanged() <-chan struct{} { return s.remote.c() }

func newRemoteClient(allowPrivate bool) *http.Client {
	return &http.Client{
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Transport:     newGuardedTransport(allowPrivate),
	}
}

// RemoteAgentInput registers a remote agent: the name it has in the project, its Agent
// Card's URL, and the credential agentdesk sends it (kind "" sends none).
type RemoteAgentInput struct {
	Name, CardURL, CredentialKind, Credential string
}

// RemoteAgent is a remote agent as shown: its agents row, where its card is and the
// card, and the kind of credential it is sent (the credential itself is never shown).
type RemoteAgent struct {
	Agent          *model.Agent
	CardURL        string
	Card           *a2a.AgentCard
	CredentialKind string
}

// RegisterRemoteAgent fetches the Agent Card at in.CardURL and registers the agent it
// describes in the principal's project (admin). The card's URL and the agent's endpoint
// follow the webhooks' rule on addresses.
func (s *Service) RegisterRemoteAgent(ctx context.Context, p *auth.Principal, in RemoteAgentInput) (*RemoteAgent, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if !agentNamePattern.MatchString(in.Name) {
		return nil, errs.Invalid("agent name %q is not valid: use 1 to 64 letters, digits, dots, dashes and underscores, starting with a letter or digit", in.Name)
	}
	switch in.CredentialKind {
	case CredentialNone:
		if in.Credential != "" {
			return nil, errs.Invalid("credential given without credentialKind: say bearer or apikey")
		}
	case CredentialBearer, CredentialAPIKey:
		if err := checkText("credential", in.Credential, true, MaxRemoteCredentialLen); err != nil {
			return nil, err
		}
	default:
		return nil, errs.Invalid("credentialKind %q is not one of bearer, apikey (or none)", in.CredentialKind)
	}
	if err := s.checkWebhookURL(ctx, in.CardURL); err != nil {
		return nil, err
	}
	card, raw, err := s.fetchAgentCard(ctx, in.CardURL)
	if err != nil {
		return nil, err
	}
	now := s.clock()
	agent := &model.Agent{ProjectID: p.ProjectID, Name: in.Name, CreatedAt: now,
		DisplayName: truncate(card.Name, MaxAgentDisplayNameLen), Description: truncate(card.Description, MaxAgentDescriptionLen)}
	err = s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		if _, err := s.project(ctx, tx.Reader, p.ProjectID); err != nil {
			return err
		}
		err := tx.InsertAgent(ctx, agent)
		if errors.Is(err, store.ErrDuplicate) {
			return errs.Conflicting("an agent named %q already exists in this project", in.Name)
		}
		if err != nil {
			return internal("create agent", err)
		}
		if err := tx.UpdateAgentProfile(ctx, agent); err != nil {
			return internal("create agent", err)
		}
		err = tx.InsertRemoteAgent(ctx, &store.RemoteAgent{AgentID: agent.ID, ProjectID: p.ProjectID, CardURL: in.CardURL,
			Card: string(raw), CredentialKind: in.CredentialKind, Credential: in.Credential, CreatedAt: now, UpdatedAt: now})
		if err != nil {
			return internal("store remote agent", err)
		}
		return tx.AppendEvent(ctx, p.ProjectID, "agent.created", agent, now)
	})
	if err != nil {
		return nil, err
	}
	return &RemoteAgent{Agent: agent, CardURL: in.CardURL, Card: card, CredentialKind: in.CredentialKind}, nil
}

// fetchAgentCard reads the Agent Card at cardURL (within RemoteCardTimeout and
// RemoteCardMaxBytes), and checks that it names an endpoint agentdesk may reach over
// JSON-RPC. raw is the card as fetched, re-encoded.
func (s *Service) fetchAgentCard(ctx context.Context, cardURL string) (card *a2a.AgentCard, raw []byte, err error) {
	ctx, cancel := context.WithTimeout(ctx, RemoteCardTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, cardURL, nil)
	if err != nil {
		return nil, nil, errs.Invalid("cardUrl: %v", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := s.remoteClient.Do(req)
	if err != nil {
		return nil, nil, errs.Invalid("the Agent Card at %s could not be fetched: %s", cardURL, describeRemoteError(err, RemoteCardTimeout))
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, nil, errs.Invalid("the Agent Card at %s could not be fetched: HTTP %d", cardURL, resp.StatusCode)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, RemoteCardMaxBytes+1))
	if err != nil {
		return nil, nil, errs.Invalid("the Agent Card at %s could not be read: %s", cardURL, describeRemoteError(err, RemoteCardTimeout))
	}
	if int64(len(body)) > RemoteCardMaxBytes {
		return nil, nil, errs.Invalid("the Agent Card at %s is larger than %d KiB", cardURL, RemoteCardMaxBytes>>10)
	}
	card = &a2a.AgentCard{}
	if err := json.Unmarshal(body, card); err != nil {
		return nil, nil, errs.Invalid("%s is not an Agent Card: %v", cardURL, err)
	}
	if strings.TrimSpace(card.Name) == "" || card.URL == "" {
		return nil, nil, errs.Invalid("%s is not an Agent Card: it has no name or no url", cardURL)
	}
	endpoint := JSONRPCEndpoint(card)
	if endpoint == "" {
		return nil, nil, errs.Invalid("the agent at %s does not speak A2A over JSON-RPC, the one transport agentdesk uses", cardURL)
	}
	if err := s.checkWebhookURL(ctx, endpoint); err != nil {
		_, msg := errs.Public(err)
		return nil, nil, errs.Invalid("the Agent Card's endpoint: %s", msg)
	}
	raw, err = json.Marshal(card)
	if err != nil {
		return nil, nil, internal("encode agent card", err)
	}
	return card, raw, nil
}

// JSONRPCEndpoint is where the card's agent speaks A2A over JSON-RPC, the one transport
// agentdesk uses: its url when its preferred transport is JSON-RPC (A2A's default), else
// the first of its additional interfaces that is JSON-RPC (in the card's order, as
// a2a-go's client picks); "" when it has none.
func JSONRPCEndpoint(card *a2a.AgentCard) string {
	if card.PreferredTransport == "" || card.PreferredTransport == a2a.TransportProtocolJSONRPC {
		return card.URL
	}
	for _, i := range card.AdditionalInterfaces {
		if i.Transport == a2a.TransportProtocolJSONRPC {
			return i.URL
		}
	}
	return ""
}

// describeRemoteError says why a request to a remote agent got no answer.
func describeRemoteError(err error, timeout time.Duration) string {
	if errors.Is(err, context.DeadlineExceeded) {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	var t interface{ Timeout() bool }
	if errors.As(err, &t) && t.Timeout() {
		return fmt.Sprintf("no answer within %s", timeout)
	}
	return describeSendError(err)
}

// RemoteAgents lists the project's remote agents (task:read), with their cards.
func (s *Service) RemoteAgents(ctx context.Context, p *auth.Principal) ([]RemoteAgent, error) {
	if err := require(p, auth.TaskRead); err != nil {
		return nil, err
	}
	r := s.store.Read()
	list, err := r.RemoteAgents(ctx, p.ProjectID)
	if err != nil {
		return nil, internal("list remote agents", err)
	}
	out := make([]RemoteAgent, 0, len(list))
	for _, ra := range list {
		agent, err := r.Agent(ctx, p.ProjectID, ra.AgentID)
		if err != nil {
			return nil, internal("load agent", err)
		}
		card := &a2a.AgentCard{}
		if err := json.Unmarshal([]byte(ra.Card), card); err != nil {
			return nil, internal("decode agent card", err)
		}
		out = append(out, RemoteAgent{Agent: agent, CardURL: ra.CardURL, Card: card, CredentialKind: ra.CredentialKind})
	}
	return out, nil
}

// queueRemoteRequest is called in every write that creates a task (fresh) or assigns
// it: if its agent is a remote one it has not been sent to, the task's request (summary
// and details) waits in its outbox; a task taken from a remote agent forgets the
// exchange.
func (s *Service) queueRemoteRequest(ctx context.Context, tx *store.Tx, t *model.Task, fresh bool, now time.Time) error {
	if !fresh {
		rt, err := tx.RemoteTask(ctx, t.ProjectID, t.ID)
		if errors.Is(err, store.ErrNotFound) {
			rt = nil
		} else if err != nil {
			return internal("load remote task", err)
		}
		if rt != nil && t.AgentID != nil && rt.AgentID == *t.AgentID {
			return nil // sent already
		}
		if rt != nil {
			if err := tx.DeleteRemoteTask(ctx, t.ID); err != nil {
				return internal("forget remote task", err)
			}
		}
	}
	if t.AgentID == nil {
		return nil
	}
	if _, err := tx.RemoteAgent(ctx, t.ProjectID, *t.AgentID); errors.Is(err, store.ErrNotFound) {
		return nil // one of agentdesk's own agents
	} else if err != nil {
		return internal("load remote agent", err)
	}
	request := strings.TrimSpace(t.Summary + "\n\n" + t.Details)
	err := tx.SaveRemoteTask(ctx, &store.RemoteTask{TaskID: t.ID, AgentID: *t.AgentID, ProjectID: t.ProjectID,
		Outbox: request, OutboxID: fmt.Sprintf("agentdesk-%d-request-%d", t.ID, t.Version), NextAttemptAt: now, UpdatedAt: now})
	if err != nil {
		return internal("queue for the remote agent", err)
	}
	s.remote.wake() // early is harmless: the sender looks again every second
	return nil
}

// queueRemoteAnswer is called in the write that answers task t's question: when t is a
// remote agent's, the answer waits in its outbox, to be sent on the remote task.
func (s *Service) queueRemoteAnswer(ctx context.Context, tx *store.Tx, t *model.Task, answer string, now time.Time) error {
	rt, err := tx.RemoteTask(ctx, t.ProjectID, t.ID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return internal("load remote task", err)
	}
	rt.Outbox, rt.OutboxID = answer, fmt.Sprintf("agentdesk-%d-answer-%d", t.ID, t.WaitingVersion)
	rt.Follow, rt.Attempts, rt.NextAttemptAt, rt.UpdatedAt = false, 0, now, now
	if err := tx.SaveRemoteTask(ctx, rt); err != nil {
		return internal("queue for the remote agent", err)
	}
	s.remote.wake()
	return nil
}

// DueRemoteTask is a task with something to send to its remote agent, or to ask it.
type DueRemoteTask struct {
	ProjectID string
	TaskID    int64
}

// DueRemoteTasks lists the remote tasks due now.
func (s *Service) DueRemoteTasks(ctx context.Context) ([]DueRemoteTask, error) {
	list, err := s.store.Read().DueRemoteTasks(ctx, s.clock())
	if err != nil {
		return nil, internal("list due remote tasks", err)
	}
	due := make([]DueRemoteTask, len(list))
	for i, rt := range list {
		due[i] = DueRemoteTask{ProjectID: rt.ProjectID, TaskID: rt.TaskID}
	}
	return due, nil
}

// RemoteAttempt is what one attempt at a remote task needs: the agent's card and
// credential, the remote task (ids "" before it has one), the message to send ("" none:
// ask where the task is), and the client to send with.
type RemoteAttempt struct {
	Card                       *a2a.AgentCard
	CredentialKind, Credential string
	RemoteTaskID, ContextID    string
	Outbox, OutboxID           string
	Client                     *http.Client
	Timeout                    time.Duration
}

// RemoteAttemptFor is the attempt due at task taskID; nil when none is (any more).
func (s *Service) RemoteAttemptFor(ctx context.Context, projectID string, taskID int64) (*RemoteAttempt, error) {
	r := s.store.Read()
	rt, err := r.RemoteTask(ctx, projectID, taskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("load remote task", err)
	}
	if (rt.Outbox == "" && !rt.Follow) || rt.NextAttemptAt.After(s.clock()) {
		return nil, nil
	}
	ra, err := r.RemoteAgent(ctx, projectID, rt.AgentID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("load remote agent", err)
	}
	card := &a2a.AgentCard{}
	if err := json.Unmarshal([]byte(ra.Card), card); err != nil {
		return nil, internal("decode agent card", err)
	}
	return &RemoteAttempt{Card: card, CredentialKind: ra.CredentialKind, Credential: ra.Credential,
		RemoteTaskID: rt.RemoteTaskID, ContextID: rt.ContextID, Outbox: rt.Outbox, OutboxID: rt.OutboxID,
		Client: s.remoteClient, Timeout: RemoteAttemptTimeout}, nil
}

// remoteUpdate is what an A2A event from a remote agent says of its task.
type remoteUpdate struct {
	remoteID, contextID string
	state               a2a.TaskState // "": the event has no state
	message             string        // the status message's text
	messageID           string        // and its id
	artifacts           []*a2a.Artifact
	chunk               bool   // the artifact is a chunk appended to one already sent
	reply               string // a message the agent answered with, instead of a task
}

func remoteUpdateOf(ev a2a.Event) remoteUpdate {
	switch ev := ev.(type) {
	case *a2a.Task:
		return remoteUpdate{remoteID: string(ev.ID), contextID: ev.ContextID, state: ev.Status.State,
			message: a2aMessageText(ev.Status.Message), messageID: messageID(ev.Status.Message), artifacts: ev.Artifacts}
	case *a2a.TaskStatusUpdateEvent:
		return remoteUpdate{remoteID: string(ev.TaskID), contextID: ev.ContextID, state: ev.Status.State,
			message: a2aMessageText(ev.Status.Message), messageID: messageID(ev.Status.Message)}
	case *a2a.TaskArtifactUpdateEvent:
		return remoteUpdate{remoteID: string(ev.TaskID), contextID: ev.ContextID, artifacts: []*a2a.Artifact{ev.Artifact}, chunk: ev.Append}
	case *a2a.Message:
		// The agent answered with a message and no task: the exchange is over.
		return remoteUpdate{remoteID: string(ev.TaskID), contextID: ev.ContextID, state: a2a.TaskStateCompleted, reply: a2aMessageText(ev)}
	}
	return remoteUpdate{}
}

func messageID(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	return m.ID
}

// a2aMessageText is the text of a message's parts: text as it is, data as JSON, a file
// by its name.
func a2aMessageText(m *a2a.Message) string {
	if m == nil {
		return ""
	}
	return partsText(m.Parts)
}

func partsText(parts a2a.ContentParts) string {
	var lines []string
	for _, p := range parts {
		switch p := p.(type) {
		case a2a.TextPart:
			lines = append(lines, p.Text)
		case a2a.DataPart:
			b, _ := json.Marshal(p.Data)
			lines = append(lines, string(b))
		case a2a.FilePart:
			name := "a file"
			switch f := p.File.(type) {
			case a2a.FileURI:
				name = cmp.Or(f.Name, f.URI)
			case a2a.FileBytes:
				name = cmp.Or(f.Name, name)
			}
			lines = append(lines, "[file: "+name+"]")
		}
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}

// remoteQuestion is the question of a remote task that is input-required without
// saying what it needs.
const remoteQuestion = "The remote agent needs input to go on."

// ApplyRemoteEvent applies what a remote agent sent about task taskID, in answer to the
// message outboxID ("" when asked where the task is): its state through
// StatusOfA2AState, its question as the Waiting question, its messages and new
// artifacts to the conversation, as the agent's. ends reports whether the exchange is
// over (service.A2AEnds). While an answer of a person waits to be sent, what the agent
// says of the question before it is not applied; nor is a question asked already.
func (s *Service) ApplyRemoteEvent(ctx context.Context, projectID string, taskID int64, outboxID string, ev a2a.Event) (ends bool, err error) {
	u := remoteUpdateOf(ev)
	// What the agent says is the agent's: in the conversation and in the activity trail.
	t, err := s.loadTask(ctx, s.store.Read(), projectID, taskID)
	if err != nil || t.AgentID == nil {
		return false, err
	}
	err = s.store.Write(ctx, s.author(remotePrincipal(t)), func(tx *store.Tx) error {
		ends = false
		rt, t, err := s.loadRemoteTask(ctx, tx, projectID, taskID)
		if err != nil || rt == nil {
			return err
		}
		now := s.clock()
		if outboxID != "" && rt.OutboxID == outboxID {
			rt.Outbox, rt.OutboxID, rt.Attempts = "", "", 0 // delivered
		} else if rt.Outbox != "" {
			return nil
		}
		rt.RemoteTaskID, rt.ContextID = cmp.Or(u.remoteID, rt.RemoteTaskID), cmp.Or(u.contextID, rt.ContextID)
		var entries []model.TaskMessage
		say := func(text string) {
			if text == "" {
				return
			}
			for i := len(t.Conversation) - 1; i >= 0; i-- { // said already (a task's snapshot repeats its status)
				if t.Conversation[i].Role == model.RoleAssistant {
					if t.Conversation[i].Content == text {
						return
					}
					break
				}
			}
			entries = append(entries, model.TaskMessage{Role: model.RoleAssistant, Content: text})
		}
		for _, a := range u.artifacts {
			if a == nil {
				continue
			}
			// Each artifact's parts join the conversation once: a chunk's (appended)
			// all, a whole artifact's (a task's snapshot) those not applied yet.
			applied := appliedParts(rt.Seen, a.ID)
			parts := a.Parts
			if !u.chunk {
				parts = parts[min(applied, len(parts)):]
			}
			say(partsText(parts))
			if a.ID != "" {
				rt.Seen = setAppliedParts(rt.Seen, a.ID, applied+len(parts))
			}
		}
		say(u.reply)
		changed, stale := false, false
		status := StatusOfA2AState(u.state)
		if status == model.StatusWaiting {
			// A question already asked is an answer's echo: the remote task as it was
			// when the answer reached it (a send answered before the agent took it in).
			asked := "question:" + u.messageID
			if stale = u.messageID != "" && slices.Contains(rt.Seen, asked); !stale {
				if u.messageID != "" {
					rt.Seen = append(rt.Seen, asked)
				}
				q := cmp.Or(u.message, remoteQuestion)
				if changed = t.Status != model.StatusWaiting || t.WaitingDetails == nil || *t.WaitingDetails != q; changed {
					setStatus(t, model.StatusWaiting, &q, nil)
				}
			}
		} else {
			say(u.message)
			if changed = status != "" && status != t.Status; changed {
				setStatus(t, status, nil, nil)
			}
		}
		if u.state != "" {
			ends = A2AEnds(u.state) && !stale
			rt.Follow = !ends
			if rt.Follow {
				rt.NextAttemptAt = now.Add(RemotePoll)
			}
		}
		rt.UpdatedAt = now
		if err := tx.SaveRemoteTask(ctx, rt); err != nil {
			return internal("store remote task", err)
		}
		if len(entries) == 0 && !changed {
			return nil
		}
		_, err = s.saveTask(ctx, tx, t, entries, now)
		return err
	})
	return ends, err
}

// appliedParts is how many parts of artifact id are in the conversation already, as
// seen records them ("artifact:ID:N").
func appliedParts(seen []string, id a2a.ArtifactID) int {
	prefix := "artifact:" + string(id) + ":"
	for _, e := range seen {
		if n, ok := strings.CutPrefix(e, prefix); ok {
			k, _ := strconv.Atoi(n)
			return k
		}
	}
	return 0
}

func setAppliedParts(seen []string, id a2a.ArtifactID, n int) []string {
	prefix := "artifact:" + string(id) + ":"
	seen = slices.DeleteFunc(seen, func(e string) bool { return strings.HasPrefix(e, prefix) })
	return append(seen, prefix+strconv.Itoa(n))
}

// loadRemoteTask loads task taskID and what its sender knows of it; rt is nil when the
// task is no remote agent's any more (deleted, or given to another agent).
func (s *Service) loadRemoteTask(ctx context.Context, tx *store.Tx, projectID string, taskID int64) (rt *store.RemoteTask, t *model.Task, err error) {
	rt, err = tx.RemoteTask(ctx, projectID, taskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, internal("load remote task", err)
	}
	t, err = s.loadTask(ctx, tx.Reader, projectID, taskID)
	if errs.CodeOf(err) == errs.NotFound {
		return nil, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	if t.AgentID == nil || *t.AgentID != rt.AgentID {
		return nil, nil, nil
	}
	return rt, t, nil
}

// remotePrincipal is the remote agent of task t, as the author of what it says.
func remotePrincipal(t *model.Task) *auth.Principal {
	return &auth.Principal{Kind: auth.KindAgent, ProjectID: t.ProjectID, Name: t.AgentName, AgentID: *t.AgentID, Via: audit.ViaJob}
}

// RemoteAttemptUnfinished records an attempt whose answer or stream ended while the
// remote agent still worked: it is asked again RemotePoll later.
func (s *Service) RemoteAttemptUnfinished(ctx context.Context, projectID string, taskID int64) error {
	return s.store.Write(ctx, store.Author{Project: projectID, Actor: s.actor}, func(tx *store.Tx) error {
		rt, _, err := s.loadRemoteTask(ctx, tx, projectID, taskID)
		if err != nil || rt == nil {
			return err
		}
		now := s.clock()
		rt.Follow, rt.NextAttemptAt, rt.UpdatedAt = true, now.Add(RemotePoll), now
		return tx.SaveRemoteTask(ctx, rt)
	})
}

// RemoteAttemptFailed records a failed attempt at task taskID (cause says why) in its
// conversation: it is tried again after RemoteBackoff; after the last, the task fails
// and nothing more is sent.
func (s *Service) RemoteAttemptFailed(ctx context.Context, projectID string, taskID int64, cause string) error {
	return s.store.Write(ctx, store.Author{Project: projectID, Actor: s.actor}, func(tx *store.Tx) error {
		rt, t, err := s.loadRemoteTask(ctx, tx, projectID, taskID)
		if err != nil || rt == nil {
			return err
		}
		now := s.clock()
		rt.Attempts++
		what := "reaching"
		if rt.Outbox != "" {
			what = "sending the task to"
		}
		var note string
		if rt.Attempts > len(RemoteBackoff) {
			note = fmt.Sprintf("The remote agent %q failed: %s. Gave up after %d attempts at %s it.", t.AgentName, cause, rt.Attempts, what)
			rt.Outbox, rt.OutboxID, rt.Follow = "", "", false
			setStatus(t, model.StatusFailed, nil, nil)
		} else {
			wait := RemoteBackoff[rt.Attempts-1]
			rt.NextAttemptAt = now.Add(wait)
			note = fmt.Sprintf("The remote agent %q failed: %s (attempt %d at %s it; trying again in %s).", t.AgentName, cause, rt.Attempts, what, wait)
		}
		rt.UpdatedAt = now
		if err := tx.SaveRemoteTask(ctx, rt); err != nil {
			return internal("store remote task", err)
		}
		// Written by the system (the job), not by the agent: it is agentdesk's account.
		_, err = s.saveTask(ctx, tx, t, []model.TaskMessage{{Role: model.RoleUser, Content: note}}, now)
		return err
	})
}

// DescribeRemoteError says why an attempt at a remote agent failed, in the words the
// task's conversation shows.
func DescribeRemoteError(err error) string { return describeRemoteError(err, RemoteAttemptTimeout) }
