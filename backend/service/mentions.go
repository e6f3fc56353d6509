package service

import (
	"context"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Mentions (issue 43 item 5). "@" followed by a name of the project's members or agents
// mentions them; the text is read once, when the message is posted, and what it names
// is kept with the message (docs/rest.md, "Mentions", says the rules to people):
//   - an agent by its name ("@worker");
//   - a person by the name the project shows for them, spaces and all ("@Ann Lee"), or
//     by their email's local part ("@ann.lee" for ann.lee@example.com);
//   - case does not matter; the longest name that fits wins ("@Ann Lee" names Ann Lee,
//     not an agent called Ann), and it must end where a word ends ("@workers" is not
//     "@worker");
//   - "@" inside a word is no mention (mail addresses stay text), and a name nobody in
//     the project has stays plain text;
//   - a name that several have (a person and an agent, two people) mentions each of
//     them: to reach one person, use their email's local part.

// mentionHandles maps each lowercased name of a project's members and agents to whom
// it names.
type mentionHandles struct {
	byName  map[string][]model.Mention
	longest int // bytes of the longest name
}

func (h *mentionHandles) add(name string, m model.Mention) {
	key := strings.ToLower(strings.TrimSpace(name))
	if key == "" {
		return
	}
	for _, have := range h.byName[key] {
		if have.Kind == m.Kind && have.Name == m.Name && sameID(have.UserID, m.UserID) && sameID(have.AgentID, m.AgentID) {
			return // a person whose name is their email's local part
		}
	}
	h.byName[key] = append(h.byName[key], m)
	h.longest = max(h.longest, len(key))
}

func sameID(a, b *int64) bool { return a == nil && b == nil || a != nil && b != nil && *a == *b }

// loadMentionHandles reads the names a message of the project may mention.
func loadMentionHandles(ctx context.Context, r store.Reader, projectID string) (*mentionHandles, error) {
	members, err := r.Members(ctx, projectID)
	if err != nil {
		return nil, internal("list members", err)
	}
	agents, err := r.Agents(ctx, projectID)
	if err != nil {
		return nil, internal("list agents", err)
	}
	h := &mentionHandles{byName: map[string][]model.Mention{}}
	for _, m := range members {
		id := m.UserID
		person := model.Mention{Kind: model.ActorUser, Name: m.Name, UserID: &id}
		h.add(m.Name, person)
		if m.Email != nil {
			if local, _, ok := strings.Cut(*m.Email, "@"); ok {
				h.add(local, person)
			}
		}
	}
	for _, a := range agents {
		id := a.ID
		h.add(a.Name, model.Mention{Kind: model.ActorAgent, Name: a.Name, AgentID: &id})
	}
	return h, nil
}

// isNameChar reports the characters that continue a word: a mention must not be
// followed by one (nor its "@" preceded by one).
func isNameChar(r rune) bool {
	return unicode.IsLetter(r) || unicode.IsDigit(r) || r == '_' || r == '-'
}

// findMentions lists whom text mentions, each once, in the order first named, with the
// text that named them.
func findMentions(text string, h *mentionHandles) []model.Mention {
	var out []model.Mention
	for i := 0; i < len(text); i++ {
		if text[i] != '@' {
			continue
		}
		if before, _ := utf8.DecodeLastRuneInString(text[:i]); i > 0 && (isNameChar(before) || before == '@') {
			continue
		}
		rest := text[i+1:]
		// Try every end of a word within the longest name, and keep the longest that names
		// someone.
		var found []model.Mention
		var foundLen int
		for j := 0; j <= len(rest) && j <= h.longest; {
			next, size := utf8.DecodeRuneInString(rest[j:])
			if j > 0 && (j == len(rest) || !isNameChar(next)) {
				if who, ok := h.byName[strings.ToLower(rest[:j])]; ok {
					found, foundLen = who, j
				}
			}
			if j == len(rest) {
				break
			}
			j += size
		}
		for _, who := range found {
			if !hasMention(out, who) {
				who.Text = text[i : i+1+foundLen]
				out = append(out, who)
			}
		}
		i += foundLen
	}
	return out
}

func hasMention(list []model.Mention, m model.Mention) bool {
	for _, have := range list {
		if have.Kind == m.Kind && sameID(have.UserID, m.UserID) && sameID(have.AgentID, m.AgentID) {
			return true
		}
	}
	return false
}

// addMentions finds whom a new message of the project mentions, sets them on m and, once
// m is stored, indexes them. A message without "@" costs no read.
func addMentions(ctx context.Context, tx *store.Tx, projectID string, m *model.Message) error {
	m.Mentions = []model.Mention{}
	if !strings.Contains(m.Content, "@") {
		return nil
	}
	h, err := loadMentionHandles(ctx, tx.Reader, projectID)
	if err != nil {
		return err
	}
	if found := findMentions(m.Content, h); found != nil {
		m.Mentions = found
	}
	return nil
}

// insertMessage stores a new message of the project with the mentions its content
// makes (the one way messages are written).
func insertMessage(ctx context.Context, tx *store.Tx, projectID string, m *model.Message) error {
	if err := addMentions(ctx, tx, projectID, m); err != nil {
		return err
	}
	if err := tx.InsertMessage(ctx, m); err != nil {
		return internal("store message", err)
	}
	if err := tx.IndexMentions(ctx, m.ID, m.Mentions); err != nil {
		return internal("store mentions", err)
	}
	return nil
}

// mentionedAs is who p is as someone a message can mention: an agent, or the person
// behind the caller (a signed-in user, a token's maker; a token nobody made, like the
// CLI's and the desktop owner's, is the local owner's). ok is false for a caller who is
// nobody a message can name (a token nobody made where the local owner is no member).
func mentionedAs(ctx context.Context, r store.Reader, p *auth.Principal) (kind string, id int64, ok bool, err error) {
	switch {
	case p.Kind == auth.KindAgent:
		return model.ActorAgent, p.AgentID, true, nil
	case p.Kind == auth.KindUser:
		return model.ActorUser, p.UserID, true, nil
	case p.Kind == auth.KindToken && p.TokenMaker != 0:
		return model.ActorUser, p.TokenMaker, true, nil
	}
	members, err := r.Members(ctx, p.ProjectID)
	if err != nil {
		return "", 0, false, internal("list members", err)
	}
	for _, m := range members {
		if m.LocalOwner {
			return model.ActorUser, m.UserID, true, nil
		}
	}
	return "", 0, false, nil
}

// DefaultMentionsLimit is how many mentions a list gives when the caller names no limit.
const DefaultMentionsLimit = 50

// MentionsInput pages the caller's mentions, newest first: at most Limit (1 to
// MaxListLimit; interfaces default it to DefaultMentionsLimit) before the message
// BeforeID (0: from the newest).
type MentionsInput struct {
	BeforeID int64
	Limit    int
}

// Mentions lists the messages of the caller's project that mention the caller (the
// person behind it, or the agent), newest first. more says whether older ones remain.
func (s *Service) Mentions(ctx context.Context, p *auth.Principal, in MentionsInput) (msgs []model.Message, more bool, err error) {
	if err := require(p, auth.MessagingRead); err != nil {
		return nil, false, err
	}
	if in.Limit < 1 || in.Limit > MaxListLimit {
		return nil, false, errs.Invalid("limit must be between 1 and %d", MaxListLimit)
	}
	if in.BeforeID < 0 {
		return nil, false, errs.Invalid("before_id must not be negative")
	}
	r := s.store.Read()
	kind, id, ok, err := mentionedAs(ctx, r, p)
	if err != nil || !ok {
		return []model.Message{}, false, err
	}
	msgs, more, err = r.MentionsOf(ctx, store.MentionFilter{ProjectID: p.ProjectID, Kind: kind, TargetID: id, BeforeID: in.BeforeID, Limit: in.Limit})
	if err != nil {
		return nil, false, internal("list mentions", err)
	}
	return msgs, more, nil
}
