package service

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/mail"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Email to the people a question asks (issue 40), when the server has --smtp-url.
//
// New questions are found by reading each project's event log from a cursor, as the
// webhooks do: every task event names a task, and a task now Waiting gets one send per
// person asked (PeopleAsked) and waiting_version, queued in the outbox in the same
// write that moves the cursor. Nothing is lost on a crash (the cursor moves only with
// the sends it found), and the writes that ask questions do no mail work at all.
//
// The jobs send the outbox (DeliverMail), retrying with WebhookBackoff. An email's
// links carry random tokens; only their SHA-256 is stored, made at the attempt that
// sends them, so neither the database nor a failed attempt holds a usable link. A link
// opens a page (backend/api/mailpage.go) that answers only after a click there: mail
// scanners follow links, never forms. A link answers once, as the person it was sent
// to, while its question stands: the task Waiting at the same waiting_version, before
// waiting_expires_at.

// MailSender sends one email (mail.Config; tests give their own).
type MailSender interface {
	Send(ctx context.Context, msg mail.Message) error
}

// Bounds of the mail work.
const (
	// MailRetention is how long sends that are done with are listed.
	MailRetention = 7 * 24 * time.Hour
	// mailEventsPage is how many events a pass reads of a project at a time.
	mailEventsPage = 100
	// mailDuePage is how many due sends one look lists.
	mailDuePage = 100
	// mailClaim is how long an attempt holds its send against other servers.
	mailClaim = mail.Timeout + 30*time.Second
	// MailPath is where an email's links point (GET shows the page, POST answers).
	MailPath = "/mail/"
)

// QueueQuestionMail reads each project's events after its mail cursor and queues a
// send for every person asked by each task now Waiting, then moves the cursor.
func (s *Service) QueueQuestionMail(ctx context.Context) error {
	behind, err := s.store.Read().MailCursorsBehind(ctx)
	if err != nil {
		return internal("list mail cursors", err)
	}
	for _, c := range behind {
		if err := s.queueProjectMail(ctx, c); err != nil {
			return err
		}
	}
	return nil
}

func (s *Service) queueProjectMail(ctx context.Context, c store.MailCursor) error {
	r := s.store.Read()
	first, last, err := r.EventBounds(ctx, c.ProjectID)
	if err != nil {
		return internal("read events", err)
	}
	cursor := c.Cursor
	if first == 0 { // none kept
		return s.queueMail(ctx, c.ProjectID, nil, max(cursor, last))
	}
	cursor = max(cursor, first-1) // pruned events are skipped
	for {
		evs, err := r.EventsSince(ctx, c.ProjectID, cursor, mailEventsPage)
		if err != nil {
			return internal("read events", err)
		}
		if len(evs) == 0 {
			return nil
		}
		var tasks []int64
		for _, e := range evs {
			if id := taskEventOf(e); id != 0 && !slices.Contains(tasks, id) {
				tasks = append(tasks, id)
			}
		}
		var sends []store.MailSend
		for _, id := range tasks {
			more, err := s.sendsFor(ctx, r, c.ProjectID, id)
			if err != nil {
				return err
			}
			sends = append(sends, more...)
		}
		cursor = evs[len(evs)-1].Seq
		if err := s.queueMail(ctx, c.ProjectID, sends, cursor); err != nil {
			return err
		}
		if len(evs) < mailEventsPage {
			return nil
		}
	}
}

// sendsFor is what a task asks now: a send per person asked when it is Waiting on a
// question still open. The task as it is now, not as the event showed it: a question
// already answered gets no email.
func (s *Service) sendsFor(ctx context.Context, r store.Reader, projectID string, id int64) ([]store.MailSend, error) {
	t, err := r.Task(ctx, projectID, id, false)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, internal("load task", err)
	}
	now := s.clock()
	if t.Status != model.StatusWaiting || questionEnded(t, t.WaitingVersion, now) != "" {
		return nil, nil
	}
	people, err := s.PeopleAsked(ctx, t)
	if err != nil {
		return nil, err
	}
	sends := make([]store.MailSend, len(people))
	for i, email := range people {
		sends[i] = store.MailSend{ProjectID: projectID, TaskID: id, WaitingVersion: t.WaitingVersion, Recipient: email,
			NextAttemptAt: now, CreatedAt: now}
	}
	return sends, nil
}

// queueMail stores the sends found (those already queued stay as they are) and moves
// the cursor, in one write.
func (s *Service) queueMail(ctx context.Context, projectID string, sends []store.MailSend, cursor int64) error {
	err := s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		for i := range sends {
			if err := tx.QueueMail(ctx, &sends[i]); err != nil {
				return err
			}
		}
		return tx.AdvanceMailCursor(ctx, projectID, cursor)
	})
	if err != nil {
		return internal("queue mail", err)
	}
	return nil
}

// questionEnded says why version's question of t takes no more answers at now; "" while
// it does.
func questionEnded(t *model.Task, version int64, now time.Time) string {
	switch {
	case t.Status != model.StatusWaiting:
		return fmt.Sprintf("the question was answered or withdrawn: the task is %s now", t.Status)
	case t.WaitingVersion != version:
		return "the task has moved on to another question since this email was sent"
	}
	if at := t.WaitingExpiresAt; at != nil && !now.Before(*at) {
		return "the question expired at " + at.UTC().Format(time.RFC3339)
	}
	return ""
}

// DueMail lists the sends to attempt now, by id.
func (s *Service) DueMail(ctx context.Context) ([]int64, error) {
	list, err := s.store.Read().DueMail(ctx, s.clock(), mailDuePage)
	if err != nil {
		return nil, internal("list due mail", err)
	}
	ids := make([]int64, len(list))
	for i, m := range list {
		ids[i] = m.ID
	}
	return ids, nil
}

// DeliverMail makes one attempt at a queued send: it takes the send (no other server
// sends it meanwhile), makes the email's links and sends it through sender, with links
// under baseURL; then records the outcome: sent, or a retry by WebhookBackoff, or
// failed once it has failed for WebhookFailingFor. A send whose question ended before
// it went out is dropped. When ctx ends during the attempt, it is not recorded (the
// claim lapses and it is tried again).
func (s *Service) DeliverMail(ctx context.Context, id int64, sender MailSender, baseURL string) error {
	now := s.clock()
	var m *store.MailSend
	var msg *mail.Message
	err := s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		if err := tx.ClaimMail(ctx, id, now, now.Add(mailClaim)); err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return nil // sent, dropped, not due, or taken by another server
			}
			return err
		}
		var err error
		if m, err = tx.MailSendByID(ctx, id); err != nil {
			return err
		}
		t, err := tx.Task(ctx, m.ProjectID, m.TaskID, false)
		if err != nil {
			return err // a deleted task takes its sends with it
		}
		if why := questionEnded(t, m.WaitingVersion, now); why != "" {
			m.Status, m.LastError = store.MailDropped, "not sent: "+why
			return tx.UpdateMail(ctx, m)
		}
		links, tokens := newMailLinks(len(t.WaitingOptions))
		if err := tx.PutMailLinks(ctx, m.ID, links); err != nil {
			return err
		}
		msg = questionMail(t, m.Recipient, baseURL, tokens)
		return nil
	})
	if err != nil {
		return internal("prepare mail", err)
	}
	if msg == nil {
		return nil
	}
	sendErr := sender.Send(ctx, *msg)
	if ctx.Err() != nil {
		return ctx.Err() // stopping: the attempt does not count
	}
	now = s.clock()
	m.Attempts++
	if sendErr == nil {
		m.Status, m.LastError, m.SentAt = store.MailSent, "", &now
	} else {
		m.LastError = describeMailError(sendErr)
		deadline := m.CreatedAt.Add(WebhookFailingFor)
		m.NextAttemptAt = now.Add(webhookBackoff(m.Attempts))
		if m.NextAttemptAt.After(deadline) {
			m.NextAttemptAt = deadline // the last attempt, three days after the question
		}
		if !now.Before(deadline) {
			m.Status = store.MailFailed
		}
	}
	err = s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error { return ignoreMissing(tx.UpdateMail(ctx, m)) })
	if err != nil {
		return internal("record mail", err)
	}
	return nil
}

// describeMailError is an attempt's error as the list of sends shows it.
func describeMailError(err error) string {
	msg := strings.ToValidUTF8(err.Error(), "\uFFFD")
	if len(msg) > 500 {
		msg = msg[:500]
	}
	return msg
}

// newMailLinks makes an email's links: one per option (choice 0..options-1), then the
// one that opens the question (choice -1). tokens are what the email carries, in the
// same order; only their hashes are stored.
func newMailLinks(options int) (links []store.MailLink, tokens []string) {
	for choice := range options + 1 {
		if choice == options {
			choice = -1
		}
		b := make([]byte, 32)
		if _, err := rand.Read(b); err != nil {
			panic("crypto/rand failed: " + err.Error())
		}
		token := base64.RawURLEncoding.EncodeToString(b)
		tokens = append(tokens, token)
		links = append(links, store.MailLink{TokenHash: hashMailToken(token), Choice: choice})
	}
	return links, tokens
}

func hashMailToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// questionMail is the email of t's question to one person: the question, a link per
// option, and the link that opens the question (the last token).
func questionMail(t *model.Task, to, baseURL string, tokens []string) *mail.Message {
	link := func(token string) string { return strings.TrimSuffix(baseURL, "/") + MailPath + token }
	who := t.AgentName
	if who == "" {
		who = "An agent"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%s is waiting for your answer on task #%d, %q:\n\n", who, t.ID, t.Summary)
	fmt.Fprintf(&b, "%s\n\n", questionText(t))
	options := t.WaitingOptions
	if len(options) > 0 {
		b.WriteString("Answer with one click (a page in agentdesk asks you to confirm):\n")
		for i, o := range options {
			fmt.Fprintf(&b, "  %s: %s\n", o, link(tokens[i]))
		}
		b.WriteString("\nOr open the question: ")
	} else {
		b.WriteString("Answer it here: ")
	}
	fmt.Fprintf(&b, "%s\n\n", link(tokens[len(tokens)-1]))
	fmt.Fprintf(&b, "The task in agentdesk (signed in): %s/tasks/%d\n\n", strings.TrimSuffix(baseURL, "/"), t.ID)
	b.WriteString("Each link answers once, as you, while the question stands")
	if at := t.WaitingExpiresAt; at != nil {
		fmt.Fprintf(&b, " (until %s)", at.UTC().Format("2006-01-02 15:04 MST"))
	}
	b.WriteString(".\n")
	return &mail.Message{To: to, Subject: "Question from " + who + ": " + shorten(t.Summary, 80), Text: b.String()}
}

func questionText(t *model.Task) string {
	if t.WaitingDetails == nil || strings.TrimSpace(*t.WaitingDetails) == "" {
		return "(the agent asked without details: see the task)"
	}
	return *t.WaitingDetails
}

func shorten(s string, n int) string {
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	return string([]rune(s)[:n-1]) + "…"
}

// MailQuestion is what an email's link shows: the question, and what the link answers.
type MailQuestion struct {
	TaskID    int64
	Summary   string
	AgentName string
	// Question is what the task asks now; "" once it is no longer Waiting.
	Question string
	// Option is the option this link answers; "" for the link that opens the question,
	// which answers with any of Options or with text.
	Option  string
	Options []string
	// Recipient is the person the email went to, whom the answer is from.
	Recipient string
	// Closed says why the link answers nothing now ("" while it does).
	Closed string
	// Answered is set by AnswerByMail once the answer is in.
	Answered bool
}

// MailAnswer is what the page's form sends: for the link that opens the question, an
// option's index or text; an option's link needs neither.
type MailAnswer struct {
	Choice   *int
	Response string
}

// MailLink is what an email's link shows now (no credential: the token is one). It
// changes nothing. An unknown token is not found.
func (s *Service) MailLink(ctx context.Context, token string) (*MailQuestion, error) {
	q, _, _, err := s.mailLink(ctx, s.store.Read(), token)
	return q, err
}

// mailLink resolves a token: what it shows, and its link and send.
func (s *Service) mailLink(ctx context.Context, r store.Reader, token string) (*MailQuestion, *store.MailLink, *store.MailSend, error) {
	unknown := errs.Missing("this link is not known: it may have been mistyped, or its question is more than %d days old", int(MailRetention.Hours()/24))
	if token == "" || len(token) > 100 {
		return nil, nil, nil, unknown
	}
	l, err := r.MailLinkByHash(ctx, hashMailToken(token))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, nil, unknown
	}
	if err != nil {
		return nil, nil, nil, internal("load mail link", err)
	}
	m, err := r.MailSendByID(ctx, l.OutboxID)
	if err != nil {
		return nil, nil, nil, storeError(err, "load mail", func() error { return unknown })
	}
	t, err := r.Task(ctx, m.ProjectID, m.TaskID, false)
	if err != nil {
		return nil, nil, nil, storeError(err, "load task", func() error { return errs.Missing("the task of this link was deleted") })
	}
	q := &MailQuestion{TaskID: t.ID, Summary: t.Summary, AgentName: t.AgentName, Options: t.WaitingOptions, Recipient: m.Recipient}
	if t.Status == model.StatusWaiting {
		q.Question = questionText(t) // a task no longer Waiting asks nothing to show
	}
	if l.Choice >= 0 && l.Choice < len(q.Options) {
		q.Option = q.Options[l.Choice]
	}
	switch {
	case l.UsedAt != nil:
		q.Closed = "this link was used already, at " + l.UsedAt.UTC().Format(time.RFC3339)
	case l.Choice >= 0 && q.Option == "":
		q.Closed = "the question's options have changed since this email was sent"
	default:
		q.Closed = questionEnded(t, m.WaitingVersion, s.clock())
	}
	return q, l, m, nil
}

// AnswerByMail answers the question of an email's link, as the person it was sent to,
// when the link is unused and its question stands; the link is then used. Otherwise
// nothing changes, and the question says why (Closed). Only the page's POST calls it.
func (s *Service) AnswerByMail(ctx context.Context, token string, in MailAnswer) (*MailQuestion, error) {
	r := s.store.Read()
	q, l, m, err := s.mailLink(ctx, r, token)
	if err != nil || q.Closed != "" {
		return q, err
	}
	p, why, err := s.mailPrincipal(ctx, r, m)
	if err != nil {
		return nil, err
	}
	if why != "" {
		q.Closed = why
		return q, nil
	}
	answer := RespondInput{Response: strings.TrimSpace(in.Response), WaitingVersion: &m.WaitingVersion}
	switch {
	case q.Option != "":
		answer = RespondInput{Choice: &q.Option, WaitingVersion: &m.WaitingVersion}
	case in.Choice != nil:
		if *in.Choice < 0 || *in.Choice >= len(q.Options) {
			return nil, errs.Invalid("choice must be the index of one of the question's %d options", len(q.Options))
		}
		answer = RespondInput{Choice: &q.Options[*in.Choice], WaitingVersion: &m.WaitingVersion}
	}
	if _, err := s.Respond(ctx, p, m.TaskID, answer, "", nil); err != nil {
		if errs.CodeOf(err) == errs.Conflict {
			q.Closed = "the question was answered or changed meanwhile: " + err.Error()
			return q, nil
		}
		return nil, err
	}
	// The answer is in: the question has moved on, so the link answers nothing more
	// whatever happens here; marking it used says so in its own words.
	err = s.store.Write(context.WithoutCancel(ctx), s.author(p), func(tx *store.Tx) error {
		return ignoreMissing(tx.UseMailLink(ctx, l.TokenHash, s.clock()))
	})
	if err != nil {
		return nil, internal("mark mail link used", err)
	}
	q.Answered = true
	return q, nil
}

// mailPrincipal is the person an email went to, acting in its project: why is set when
// they may no longer answer (removed, or their role no longer writes tasks).
func (s *Service) mailPrincipal(ctx context.Context, r store.Reader, m *store.MailSend) (p *auth.Principal, why string, err error) {
	gone := m.Recipient + " is no longer a member of this project who may answer questions"
	userID, err := r.UserByEmail(ctx, m.Recipient)
	if errors.Is(err, store.ErrNotFound) {
		return nil, gone, nil
	}
	if err != nil {
		return nil, "", internal("load user", err)
	}
	member, err := r.Member(ctx, m.ProjectID, userID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, gone, nil
	}
	if err != nil {
		return nil, "", internal("load member", err)
	}
	scopes := RoleScopes(member.Role)
	if !slices.Contains(scopes, auth.TaskWrite) {
		return nil, gone, nil
	}
	return &auth.Principal{Kind: auth.KindUser, ProjectID: m.ProjectID, Name: member.Name, UserID: userID, Role: member.Role,
		Scopes: scopes, Via: audit.ViaEmail}, "", nil
}

// MailSends lists the project's recent emails, newest first, with their status and
// last error (admin).
func (s *Service) MailSends(ctx context.Context, p *auth.Principal, limit int) ([]store.MailSend, error) {
	if err := require(p, auth.Admin); err != nil {
		return nil, err
	}
	if limit <= 0 || limit > 1000 {
		return nil, errs.Invalid("first must be 1 to 1000, not %d", limit)
	}
	list, err := s.store.Read().MailSends(ctx, p.ProjectID, limit)
	if err != nil {
		return nil, internal("list mail", err)
	}
	return list, nil
}

// PruneMail forgets the sends done with for MailRetention, with their links.
func (s *Service) PruneMail(ctx context.Context) error {
	before := s.clock().Add(-MailRetention)
	return s.store.Write(ctx, s.author(nil), func(tx *store.Tx) error {
		_, err := tx.PruneMail(ctx, before)
		return err
	})
}
