package service

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"path/filepath"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Bounds on conversation input, also stated in the OpenAPI document.
const (
	MaxMessageLen          = 100_000
	MaxConversationNameLen = 200
	MaxParticipantNameLen  = 200
	MaxEmojiLen            = 64
	MaxDocumentNameLen     = 255
	// MaxDocumentSize is the largest document that can be shared (the contract's 25 MiB).
	MaxDocumentSize = 25 << 20
)

// Event types of conversations.
const (
	EventConversationCreated = "conversation.created"
	EventMessageCreated      = "message.created"
	EventDocumentCreated     = "document.created"
	EventParticipantAdded    = "participant.added"
	EventParticipantRemoved  = "participant.removed"
	EventReactionAdded       = "reaction.added"
	EventReactionRemoved     = "reaction.removed"
)

// PageInput pages a list by id: at most Limit items (0: all) after AfterID.
type PageInput struct {
	AfterID int64
	Limit   int
}

func (in PageInput) validate() error {
	if in.Limit < 0 || in.Limit > MaxListLimit {
		return errs.Invalid("limit must be between 1 and %d", MaxListLimit)
	}
	if in.AfterID < 0 {
		return errs.Invalid("after_id must not be negative")
	}
	return nil
}

// CreateConversationInput is a new conversation with its first message. The text may
// come as message or as its synonym content.
type CreateConversationInput struct {
	Message *string `json:"message"`
	Content *string `json:"content"`
	Name    *string `json:"name"`
}

// PostMessageInput is a new message; the text may come as message or as content.
type PostMessageInput struct {
	Message *string `json:"message"`
	Content *string `json:"content"`
}

// messageText picks the text of a message out of message and its synonym content.
func messageText(message, content *string) (string, error) {
	return textOrSynonym("message", message, "content", content, MaxMessageLen)
}

// textOrSynonym picks a required text given as the field name or as its synonym: both
// at once must be the same text.
func textOrSynonym(name string, value *string, synonym string, synValue *string, max int) (string, error) {
	var text string
	switch {
	case value != nil && synValue != nil && *value != *synValue:
		return "", errs.Invalid("give the text as %s or as %s, not both", name, synonym)
	case value != nil:
		text = *value
	case synValue != nil:
		text = *synValue
	default:
		return "", errs.Invalid("%s is required (%s is accepted as its synonym)", name, synonym)
	}
	if err := checkText(name, text, true, max); err != nil {
		return "", err
	}
	return text, nil
}

// conversationName checks an optional name; a blank one means none.
func conversationName(name *string) (*string, error) {
	if name == nil {
		return nil, nil
	}
	if err := checkText("name", *name, false, MaxConversationNameLen); err != nil {
		return nil, err
	}
	if strings.TrimSpace(*name) == "" {
		return nil, nil
	}
	return name, nil
}

// actorOf is the principal as a conversation participant: agents as themselves, every
// other caller as a user of its name.
func actorOf(p *auth.Principal) model.Participant {
	name := p.Name
	if p.Kind == auth.KindAgent {
		id := p.AgentID
		return model.Participant{Kind: model.ActorAgent, Name: name, AgentID: &id}
	}
	if name == "" {
		name = "user"
	}
	return model.Participant{Kind: model.ActorUser, Name: name}
}

// newUUID returns a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// conversationFinder finds a conversation of a project: store.Reader, or store.Tx inside
// a write (which keeps the conversations it found for the rest of its batch).
type conversationFinder interface {
	ConversationID(ctx context.Context, projectID, ref string) (int64, error)
}

// conversationID resolves a conversation reference (integer id or uuid) of the project;
// an unknown one, or one of another project, is not found.
func (s *Service) conversationID(ctx context.Context, r conversationFinder, projectID, ref string) (int64, error) {
	shown := ref
	if utf8.RuneCountInString(shown) > 64 {
		shown = string([]rune(shown)[:64]) + "..."
	}
	if ref == "" {
		return 0, errs.Missing("conversation not found")
	}
	id, err := r.ConversationID(ctx, projectID, ref)
	if errors.Is(err, store.ErrNotFound) {
		return 0, errs.Missing("conversation %q not found", shown)
	}
	if err != nil {
		return 0, internal("look up conversation", err)
	}
	return id, nil
}

func (s *Service) loadConversation(ctx context.Context, r store.Reader, projectID string, id int64) (*model.Conversation, error) {
	c, err := r.Conversation(ctx, projectID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("conversation %d not found", id)
	}
	if err != nil {
		return nil, internal("load conversation", err)
	}
	return c, nil
}

// CreateConversation starts a conversation in the principal's project: the caller
// becomes its participant and text its first message. With an idempotency key, a
// repeated request returns the first conversation again.
func (s *Service) CreateConversation(ctx context.Context, p *auth.Principal, in CreateConversationInput, idemKey string) (*model.Conversation, error) {
	if err := require(p, auth.MessagingWrite); err != nil {
		return nil, err
	}
	text, err := messageText(in.Message, in.Content)
	if err != nil {
		return nil, err
	}
	name, err := conversationName(in.Name)
	if err != nil {
		return nil, err
	}
	if err := CheckIdempotencyKey(idemKey); err != nil {
		return nil, err
	}
	now := s.clock()
	// The fingerprint is of the meaning, so message and content are the same request.
	input := struct {
		Message string  `json:"message"`
		Name    *string `json:"name"`
	}{text, name}
	var conv *model.Conversation
	err = s.store.Write(ctx, s.author(p), func(tx *store.Tx) (err error) {
		conv, _, err = idempotent(ctx, tx, p, idemKey, "create-conversation", input, now, func() (*model.Conversation, error) {
			c := &model.Conversation{UUID: newUUID(), ProjectID: p.ProjectID, Name: name, CreatedAt: now}
			if err := tx.InsertConversation(ctx, c); err != nil {
				return nil, internal("create conversation", err)
			}
			actor := actorOf(p)
			actor.CreatedAt = now
			if _, err := tx.AddParticipant(ctx, c.ID, actor); err != nil {
				return nil, internal("add participant", err)
			}
			c.Participants = []string{actor.Name}
			m := &model.Message{ConversationID: c.ID, Author: actor.Name, AuthorType: actor.Kind, AgentID: actor.AgentID,
				Content: text, Reactions: []model.ReactionCount{}, CreatedAt: now}
			if err := insertMessage(ctx, tx, p.ProjectID, m); err != nil {
				return nil, err
			}
			if err := tx.AppendEvent(ctx, p.ProjectID, EventConversationCreated, c, now); err != nil {
				return nil, internal("record event", err)
			}
			if err := tx.AppendEvent(ctx, p.ProjectID, EventMessageCreated, m, now); err != nil {
				return nil, internal("record event", err)
			}
			if err := s.markRead(ctx, tx, p, m.ConversationID, m.ID, now); err != nil {
				return nil, err
			}
			return c, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return conv, nil
}

// GetConversation loads a conversation of the principal's project by id or uuid.
func (s *Service) GetConversation(ctx context.Context, p *auth.Principal, ref string) (*model.Conversation, error) {
	if err := require(p, auth.MessagingRead); err != nil {
		return nil, err
	}
	r := s.store.Read()
	id, err := s.conversationID(ctx, r, p.ProjectID, ref)
	if err != nil {
		return nil, err
	}
	return s.loadConversation(ctx, r, p.ProjectID, id)
}

// ListConversations lists the principal's project's conversations, oldest first, each
// with the caller's read marker and unread count (people only). more says whether
// conversations remain after the last one.
func (s *Service) ListConversations(ctx context.Context, p *auth.Principal, in PageInput) (convs []model.Conversation, more bool, err error) {
	if err := require(p, auth.MessagingRead); err != nil {
		return nil, false, err
	}
	if err := in.validate(); err != nil {
		return nil, false, err
	}
	r := s.store.Read()
	convs, more, err = r.Conversations(ctx, store.ConversationFilter{ProjectID: p.ProjectID, AfterID: in.AfterID, Limit: in.Limit})
	if err != nil {
		return nil, false, internal("list conversations", err)
	}
	if err := addReadStates(ctx, r, p, convs); err != nil {
		return nil, false, err
	}
	return convs, more, nil
}

// PostMessage adds a message to a conversation; a poster who is not yet a participant
// becomes one. With an idempotency key, a repeated request returns the first message.
func (s *Service) PostMessage(ctx context.Context, p *auth.Principal, ref string, in PostMessageInput, idemKey string) (*model.Message, error) {
	if err := require(p, auth.MessagingWrite); err != nil {
		return nil, err
	}
	text, err := messageText(in.Message, in.Content)
	if err != nil {
		return nil, err
	}
	if err := CheckIdempotencyKey(idemKey); err != nil {
		return nil, err
	}
	now := s.clock()
	var msg *model.Message
	err = s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		convID, err := s.conversationID(ctx, tx, p.ProjectID, ref)
		if err != nil {
			return err
		}
		input := struct {
			ConversationID int64  `json:"conversationId"`
			Message        string `json:"message"`
		}{convID, text}
		msg, _, err = idempotent(ctx, tx, p, idemKey, "post-message", input, now, func() (*model.Message, error) {
			actor := actorOf(p)
			actor.CreatedAt = now
			if err := s.joinConversation(ctx, tx, p.ProjectID, convID, actor, now); err != nil {
				return nil, err
			}
			m := &model.Message{ConversationID: convID, Author: actor.Name, AuthorType: actor.Kind, AgentID: actor.AgentID,
				Content: text, Reactions: []model.ReactionCount{}, CreatedAt: now}
			if err := insertMessage(ctx, tx, p.ProjectID, m); err != nil {
				return nil, err
			}
			if err := tx.AppendEvent(ctx, p.ProjectID, EventMessageCreated, m, now); err != nil {
				return nil, internal("record event", err)
			}
			if err := s.markRead(ctx, tx, p, m.ConversationID, m.ID, now); err != nil {
				return nil, err
			}
			return m, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return msg, nil
}

// ParticipantEvent is the data of participant.added and participant.removed.
type ParticipantEvent struct {
	ConversationID int64             `json:"conversationId"`
	Participant    model.Participant `json:"participant"`
}

// joinConversation makes actor a participant if it is not one yet, with its event.
func (s *Service) joinConversation(ctx context.Context, tx *store.Tx, projectID string, convID int64, actor model.Participant, now time.Time) error {
	added, err := tx.AddParticipant(ctx, convID, actor)
	if err != nil {
		return internal("add participant", err)
	}
	if !added {
		return nil
	}
	if err := tx.AppendEvent(ctx, projectID, EventParticipantAdded, ParticipantEvent{convID, actor}, now); err != nil {
		return internal("record event", err)
	}
	return nil
}

// ListMessages lists a conversation's messages, oldest first, with reaction counts.
// more says whether messages remain after the last one.
func (s *Service) ListMessages(ctx context.Context, p *auth.Principal, ref string, in PageInput) (msgs []model.Message, more bool, err error) {
	return conversationList(ctx, s, p, ref, in, "messages", func(r store.Reader, convID int64) ([]model.Message, bool, error) {
		return r.Messages(ctx, store.MessageFilter{ConversationID: convID, AfterID: in.AfterID, Limit: in.Limit})
	})
}

// conversationList reads one page of a conversation's items (messages, documents,
// linked tasks) with list, for a caller with messaging:read and the other scopes
// given. what names the items in the error of a failed read.
func conversationList[T any](ctx context.Context, s *Service, p *auth.Principal, ref string, in PageInput, what string,
	list func(r store.Reader, convID int64) ([]T, bool, error), scopes ...string) ([]T, bool, error) {
	for _, sc := range append([]string{auth.MessagingRead}, scopes...) {
		if err := require(p, sc); err != nil {
			return nil, false, err
		}
	}
	if err := in.validate(); err != nil {
		return nil, false, err
	}
	r := s.store.Read()
	convID, err := s.conversationID(ctx, r, p.ProjectID, ref)
	if err != nil {
		return nil, false, err
	}
	items, more, err := list(r, convID)
	if err != nil {
		return nil, false, internal("list "+what, err)
	}
	return items, more, nil
}

// GetMessage loads one message of the principal's project, with its reaction counts.
func (s *Service) GetMessage(ctx context.Context, p *auth.Principal, id int64) (*model.Message, error) {
	if err := require(p, auth.MessagingRead); err != nil {
		return nil, err
	}
	return s.loadMessage(ctx, s.store.Read(), p.ProjectID, id)
}

func (s *Service) loadMessage(ctx context.Context, r store.Reader, projectID string, id int64) (*model.Message, error) {
	m, err := r.Message(ctx, projectID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errs.Missing("message %d not found", id)
	}
	if err != nil {
		return nil, internal("load message", err)
	}
	return m, nil
}

// ConversationTasks lists the tasks linked to a conversation, oldest first. It needs
// both messaging:read and task:read.
func (s *Service) ConversationTasks(ctx context.Context, p *auth.Principal, ref string, in PageInput) (tasks []model.Task, more bool, err error) {
	return conversationList(ctx, s, p, ref, in, "conversation tasks", func(r store.Reader, convID int64) ([]model.Task, bool, error) {
		return r.Tasks(ctx, store.TaskFilter{ProjectID: p.ProjectID, ConversationID: &convID, AfterID: in.AfterID, Limit: in.Limit})
	}, auth.TaskRead)
}

// ParticipantInput names a participant: a user by name, or an agent of the project by
// agent id or name.
type ParticipantInput struct {
	Kind    string `json:"kind"` // user or agent
	Name    string `json:"name"`
	AgentID *int64 `json:"agentId"`
}

// participant resolves in to the participant it names.
func (s *Service) participant(ctx context.Context, r store.Reader, projectID string, in ParticipantInput) (model.Participant, error) {
	switch in.Kind {
	case model.ActorUser:
		if in.AgentID != nil {
			return model.Participant{}, errs.Invalid("agentId is only for participants of kind agent")
		}
		if err := checkText("name", in.Name, true, MaxParticipantNameLen); err != nil {
			return model.Participant{}, err
		}
		return model.Participant{Kind: model.ActorUser, Name: in.Name}, nil
	case model.ActorAgent:
		var agent *model.Agent
		var err error
		switch {
		case in.AgentID != nil:
			if agent, err = s.projectAgent(ctx, r, projectID, *in.AgentID); err != nil {
				return model.Participant{}, err
			}
			if in.Name != "" && in.Name != agent.Name {
				return model.Participant{}, errs.Invalid("agent %d is named %q, not %q", agent.ID, agent.Name, in.Name)
			}
		case in.Name != "":
			agent, err = r.AgentByName(ctx, projectID, in.Name)
			if errors.Is(err, store.ErrNotFound) {
				return model.Participant{}, errs.Invalid("there is no agent named %q in this project", in.Name)
			}
			if err != nil {
				return model.Participant{}, internal("load agent", err)
			}
		default:
			return model.Participant{}, errs.Invalid("an agent participant needs agentId or name")
		}
		id := agent.ID
		return model.Participant{Kind: model.ActorAgent, Name: agent.Name, AgentID: &id}, nil
	}
	return model.Participant{}, errs.Invalid("participant kind %q is not valid: use user or agent", in.Kind)
}

// Participants lists a conversation's participants in the order they joined.
func (s *Service) Participants(ctx context.Context, p *auth.Principal, ref string) ([]model.Participant, error) {
	if err := require(p, auth.MessagingRead); err != nil {
		return nil, err
	}
	r := s.store.Read()
	convID, err := s.conversationID(ctx, r, p.ProjectID, ref)
	if err != nil {
		return nil, err
	}
	out, err := r.Participants(ctx, convID)
	if err != nil {
		return nil, internal("list participants", err)
	}
	return out, nil
}

// AddParticipant adds a user or an agent to a conversation and returns the conversation.
// Adding a participant twice changes nothing.
func (s *Service) AddParticipant(ctx context.Context, p *auth.Principal, ref string, in ParticipantInput) (*model.Conversation, error) {
	return s.changeParticipants(ctx, p, ref, func(tx *store.Tx, convID int64, now time.Time) error {
		part, err := s.participant(ctx, tx.Reader, p.ProjectID, in)
		if err != nil {
			return err
		}
		part.CreatedAt = now
		return s.joinConversation(ctx, tx, p.ProjectID, convID, part, now)
	})
}

// RemoveParticipant takes a user or an agent out of a conversation and returns the
// conversation. Its messages stay. One that is not a participant is not found.
func (s *Service) RemoveParticipant(ctx context.Context, p *auth.Principal, ref string, in ParticipantInput) (*model.Conversation, error) {
	return s.changeParticipants(ctx, p, ref, func(tx *store.Tx, convID int64, now time.Time) error {
		var part model.Participant
		var err error
		if in.Kind == model.ActorAgent && in.AgentID == nil && in.Name != "" {
			// An agent may have been deleted since it joined: remove it by name alone.
			part = model.Participant{Kind: model.ActorAgent, Name: in.Name}
		} else if part, err = s.participant(ctx, tx.Reader, p.ProjectID, in); err != nil {
			return err
		}
		removed, err := tx.RemoveParticipant(ctx, convID, part.Kind, part.Name)
		if err != nil {
			return internal("remove participant", err)
		}
		if !removed {
			return errs.Missing("%s %q is not a participant of conversation %d", part.Kind, part.Name, convID)
		}
		if err := tx.AppendEvent(ctx, p.ProjectID, EventParticipantRemoved, ParticipantEvent{convID, part}, now); err != nil {
			return internal("record event", err)
		}
		return nil
	})
}

// changeParticipants runs change on the conversation ref names, in one write, and
// returns the conversation as it then is.
func (s *Service) changeParticipants(ctx context.Context, p *auth.Principal, ref string, change func(tx *store.Tx, convID int64, now time.Time) error) (*model.Conversation, error) {
	if err := require(p, auth.MessagingWrite); err != nil {
		return nil, err
	}
	now := s.clock()
	var conv *model.Conversation
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		convID, err := s.conversationID(ctx, tx, p.ProjectID, ref)
		if err != nil {
			return err
		}
		if err := change(tx, convID, now); err != nil {
			return err
		}
		conv, err = s.loadConversation(ctx, tx.Reader, p.ProjectID, convID)
		return err
	})
	if err != nil {
		return nil, err
	}
	return conv, nil
}

// checkEmoji validates a reaction: 1 to MaxEmojiLen characters without spaces or
// control characters (an emoji, possibly a joined sequence, or a :shortcode:).
func checkEmoji(emoji string) error {
	if err := checkText("emoji", emoji, true, MaxEmojiLen); err != nil {
		return err
	}
	for _, r := range emoji {
		if unicode.IsSpace(r) || unicode.IsControl(r) {
			return errs.Invalid("emoji must not contain spaces or control characters")
		}
	}
	return nil
}

// ReactionEvent is the data of reaction.added and reaction.removed: the reaction, the
// conversation of its message, and the message's counts after the change.
type ReactionEvent struct {
	ConversationID int64 `json:"conversationId"`
	model.Reaction
	Reactions []model.ReactionCount `json:"reactions"`
}

// AddReaction puts the caller's emoji on a message of its project and returns the
// message with its counts. An actor reacts at most once per emoji; again changes nothing.
func (s *Service) AddReaction(ctx context.Context, p *auth.Principal, messageID int64, emoji string) (*model.Message, error) {
	return s.react(ctx, p, messageID, emoji, true)
}

// RemoveReaction takes the caller's emoji off a message and returns the message with its
// counts. Removing a reaction that is not there changes nothing.
func (s *Service) RemoveReaction(ctx context.Context, p *auth.Principal, messageID int64, emoji string) (*model.Message, error) {
	return s.react(ctx, p, messageID, emoji, false)
}

func (s *Service) react(ctx context.Context, p *auth.Principal, messageID int64, emoji string, add bool) (*model.Message, error) {
	if err := require(p, auth.MessagingWrite); err != nil {
		return nil, err
	}
	if err := checkEmoji(emoji); err != nil {
		return nil, err
	}
	now := s.clock()
	var msg *model.Message
	err := s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		var err error
		if msg, err = s.loadMessage(ctx, tx.Reader, p.ProjectID, messageID); err != nil {
			return err
		}
		actor := actorOf(p)
		rc := model.Reaction{MessageID: messageID, Emoji: emoji, ActorKind: actor.Kind, Actor: actor.Name, CreatedAt: now}
		var changed bool
		event := EventReactionAdded
		if add {
			changed, err = tx.AddReaction(ctx, rc)
		} else {
			event = EventReactionRemoved
			changed, err = tx.RemoveReaction(ctx, messageID, emoji, actor.Kind, actor.Name)
		}
		if err != nil {
			return internal("update reaction", err)
		}
		if !changed {
			return nil
		}
		if msg, err = s.loadMessage(ctx, tx.Reader, p.ProjectID, messageID); err != nil {
			return err
		}
		data := ReactionEvent{ConversationID: msg.ConversationID, Reaction: rc, Reactions: msg.Reactions}
		if err := tx.AppendEvent(ctx, p.ProjectID, event, data, now); err != nil {
			return internal("record event", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return msg, nil
}

// Reactions lists who reacted to a message with what, oldest first.
func (s *Service) Reactions(ctx context.Context, p *auth.Principal, messageID int64) ([]model.Reaction, error) {
	if err := require(p, auth.MessagingRead); err != nil {
		return nil, err
	}
	r := s.store.Read()
	if _, err := s.loadMessage(ctx, r, p.ProjectID, messageID); err != nil {
		return nil, err
	}
	out, err := r.Reactions(ctx, messageID)
	if err != nil {
		return nil, internal("list reactions", err)
	}
	return out, nil
}

// ReactionCounts gives the reaction counts of many messages of the project in one
// query (for a GraphQL loader). Messages without reactions are absent from the map.
func (s *Service) ReactionCounts(ctx context.Context, p *auth.Principal, messageIDs []int64) (map[int64][]model.ReactionCount, error) {
	if err := require(p, auth.MessagingRead); err != nil {
		return nil, err
	}
	if len(messageIDs) > MaxListLimit {
		return nil, errs.Invalid("at most %d messages at a time", MaxListLimit)
	}
	out, err := s.store.Read().ReactionCounts(ctx, p.ProjectID, messageIDs)
	if err != nil {
		return nil, internal("count reactions", err)
	}
	return out, nil
}

// DocumentUpload is a document to share. Body is read up to MaxDocumentSize bytes;
// its read errors that are *errs.Error (a body over a transport limit) pass through.
type DocumentUpload struct {
	Name     string    // the file name the client gave; sanitised before it is stored
	MimeType string    // the declared type; "" or application/octet-stream to detect it
	Body     io.Reader // the bytes
}

// ShareDocument stores a document in a conversation; the uploader becomes a participant.
// Scope and conversation are checked before the body is read.
func (s *Service) ShareDocument(ctx context.Context, p *auth.Principal, ref string, in DocumentUpload) (*model.Document, error) {
	if err := require(p, auth.MessagingWrite); err != nil {
		return nil, err
	}
	if _, err := s.conversationID(ctx, s.store.Read(), p.ProjectID, ref); err != nil {
		return nil, err
	}
	content, err := io.ReadAll(io.LimitReader(in.Body, MaxDocumentSize+1))
	if err != nil {
		var e *errs.Error
		if errors.As(err, &e) {
			return nil, err
		}
		return nil, errs.Invalid("could not read the document: %v", err)
	}
	if len(content) > MaxDocumentSize {
		return nil, errs.TooLarge("the document is over the limit of %d bytes (25 MiB)", MaxDocumentSize)
	}
	name := SanitizeDocumentName(in.Name)
	doc := &model.Document{
		ProjectID: p.ProjectID,
		Name:      name,
		MimeType:  documentMimeType(in.MimeType, name, content),
		CreatedAt: s.clock(),
	}
	actor := actorOf(p)
	doc.UploadedBy = actor.Name
	err = s.store.Write(ctx, s.author(p), func(tx *store.Tx) error {
		convID, err := s.conversationID(ctx, tx, p.ProjectID, ref)
		if err != nil {
			return err
		}
		doc.ConversationID = convID
		actor.CreatedAt = doc.CreatedAt
		if err := s.joinConversation(ctx, tx, p.ProjectID, convID, actor, doc.CreatedAt); err != nil {
			return err
		}
		if err := tx.InsertDocument(ctx, doc, content); err != nil {
			return internal("store document", err)
		}
		doc.Derive()
		if err := tx.AppendEvent(ctx, p.ProjectID, EventDocumentCreated, doc, doc.CreatedAt); err != nil {
			return internal("record event", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return doc, nil
}

// ListDocuments lists a conversation's documents, oldest first, without their bytes.
func (s *Service) ListDocuments(ctx context.Context, p *auth.Principal, ref string, in PageInput) (docs []model.Document, more bool, err error) {
	return conversationList(ctx, s, p, ref, in, "documents", func(r store.Reader, convID int64) ([]model.Document, bool, error) {
		return r.Documents(ctx, store.DocumentFilter{ConversationID: convID, AfterID: in.AfterID, Limit: in.Limit})
	})
}

// GetDocument loads a document of a conversation with its bytes.
func (s *Service) GetDocument(ctx context.Context, p *auth.Principal, ref string, id int64) (*model.Document, []byte, error) {
	if err := require(p, auth.MessagingRead); err != nil {
		return nil, nil, err
	}
	r := s.store.Read()
	convID, err := s.conversationID(ctx, r, p.ProjectID, ref)
	if err != nil {
		return nil, nil, err
	}
	doc, content, err := r.DocumentContent(ctx, convID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, errs.Missing("document %d not found in this conversation", id)
	}
	if err != nil {
		return nil, nil, internal("load document", err)
	}
	return doc, content, nil
}

// SanitizeDocumentName makes a client's file name safe to store and to offer as a
// download name: the last path element, without control characters or bidirectional
// controls (which can disguise an extension), without leading or trailing dots and spaces, at
// most MaxDocumentNameLen characters (keeping a short extension); "document" if
// nothing is left.
func SanitizeDocumentName(name string) string {
	name = strings.ToValidUTF8(name, "")
	if i := strings.LastIndexAny(name, `/\`); i >= 0 {
		name = name[i+1:]
	}
	name = strings.Map(func(r rune) rune {
		if unicode.IsSpace(r) {
			return ' ' // tabs and line breaks too
		}
		if unicode.IsControl(r) || isBidiControl(r) || r == '\uFEFF' || r == utf8.RuneError {
			return -1
		}
		return r
	}, name)
	name = strings.Trim(name, " .")
	if utf8.RuneCountInString(name) > MaxDocumentNameLen {
		ext := filepath.Ext(name)
		if utf8.RuneCountInString(ext) > 32 {
			ext = ""
		}
		base := []rune(strings.TrimSuffix(name, ext))
		name = strings.TrimRight(string(base[:MaxDocumentNameLen-utf8.RuneCountInString(ext)]), " .") + ext
	}
	if name == "" {
		return "document"
	}
	return name
}

// isBidiControl reports the characters that reorder text (U+202E can show "exe.txt"
// for "txt.exe").
func isBidiControl(r rune) bool {
	return r == '\u061C' || r == '\u200E' || r == '\u200F' || (r >= '\u202A' && r <= '\u202E') || (r >= '\u2066' && r <= '\u2069')
}

// documentMimeType is the declared type when it is a valid, specific media type, else
// the type of the name's extension, else the type the content looks like.
func documentMimeType(declared, name string, content []byte) string {
	if declared != "" {
		if mt, params, err := mime.ParseMediaType(declared); err == nil && strings.Contains(mt, "/") && mt != "application/octet-stream" {
			if v := mime.FormatMediaType(mt, params); v != "" && len(v) <= 255 {
				return v
			}
		}
	}
	if ext := filepath.Ext(name); ext != "" {
		if v := mime.TypeByExtension(strings.ToLower(ext)); v != "" {
			return v
		}
	}
	return http.DetectContentType(content)
}
