package model

import (
	"net/url"
	"strconv"
	"time"
)

// Kinds of conversation actors: participants, message authors, reactors.
const (
	ActorUser  = "user"
	ActorAgent = "agent"
)

// Conversation is a message thread of a project.
type Conversation struct {
	ID        int64   `json:"id"`
	UUID      string  `json:"uuid"`
	ProjectID string  `json:"projectId"`
	Name      *string `json:"name"` // null for a conversation created without a name
	// Participants are the participants' names, in the order they joined.
	Participants []string  `json:"participants"`
	CreatedAt    time.Time `json:"createdAt"`
	// The caller's read marker (the last message they read, 0 for none) and how many
	// messages come after it: set in lists for people, absent for agents.
	LastReadMessageID *int64 `json:"lastReadMessageId,omitempty"`
	Unread            *int64 `json:"unread,omitempty"`
}

// Participant is a user or an agent taking part in a conversation.
type Participant struct {
	Kind      string    `json:"kind"` // user or agent
	Name      string    `json:"name"`
	AgentID   *int64    `json:"agentId,omitempty"` // set for agents
	CreatedAt time.Time `json:"createdAt"`
}

// Message is one message of a conversation.
type Message struct {
	ID             int64  `json:"id"`
	ConversationID int64  `json:"conversationId"`
	Author         string `json:"author"`     // display name
	AuthorType     string `json:"authorType"` // user or agent
	// AgentID is the authoring agent, for messages of agents.
	AgentID   *int64          `json:"agentId,omitempty"`
	Content   string          `json:"content"`
	Reactions []ReactionCount `json:"reactions"` // per emoji, in the order each emoji was first used
	// Mentions are the members and agents the content names with "@", in the order
	// first named; found once, when the message was posted.
	Mentions  []Mention `json:"mentions"`
	CreatedAt time.Time `json:"createdAt"`
}

// Mention is a project member or agent named with "@" in a message.
type Mention struct {
	Kind    string `json:"kind"` // user or agent
	Name    string `json:"name"` // the member's or the agent's name
	UserID  *int64 `json:"userId,omitempty"`
	AgentID *int64 `json:"agentId,omitempty"`
	// Text is how the message named them, "@" included ("@worker", "@Ann Lee"), so that
	// a reader can highlight it.
	Text string `json:"text"`
}

// ReactionCount is how many actors reacted to a message with one emoji.
type ReactionCount struct {
	Emoji string `json:"emoji"`
	Count int    `json:"count"`
}

// Reaction is one actor's emoji on a message; an actor reacts at most once per emoji.
type Reaction struct {
	MessageID int64     `json:"messageId"`
	Emoji     string    `json:"emoji"`
	ActorKind string    `json:"actorKind"` // user or agent
	Actor     string    `json:"actor"`
	CreatedAt time.Time `json:"createdAt"`
}

// Document is a file shared in a conversation. Its bytes are stored in the database
// (so that a backup holds them) and served at URL.
type Document struct {
	ID             int64     `json:"id"`
	ProjectID      string    `json:"-"`
	ConversationID int64     `json:"conversationId"`
	Name           string    `json:"name"`
	MimeType       string    `json:"mimeType"`
	Size           int64     `json:"size"`
	UploadedBy     string    `json:"uploadedBy"`
	CreatedAt      time.Time `json:"createdAt"`
	URL            string    `json:"url"` // download link, relative to the server
}

// Derive sets the fields that follow from the others (the download link).
func (d *Document) Derive() {
	d.URL = "/api/projects/" + url.PathEscape(d.ProjectID) + "/conversations/" + strconv.FormatInt(d.ConversationID, 10) +
		"/documents/" + strconv.FormatInt(d.ID, 10)
}
