package service

import (
	"cmp"
	"context"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Limits of a project-wide search.
const (
	MaxSearchQueryChars = 200
	DefaultSearchLimit  = 20
	MaxSearchLimit      = 50
	searchSnippetChars  = 120
)

// Result types of a search.
const (
	SearchTask     = "task"
	SearchMessage  = "message"
	SearchDocument = "document"
)

// SearchInput is a project-wide search: the text, and at most Limit results (1 to
// MaxSearchLimit; interfaces give DefaultSearchLimit when the client gives none).
type SearchInput struct {
	Query string
	Limit int
}

// SearchResult is one thing a search found; URL is the web UI's page of it.
type SearchResult struct {
	Type    string `json:"type"`
	ID      int64  `json:"id"`
	Title   string `json:"title"`
	Snippet string `json:"snippet"`
	URL     string `json:"url"`

	titleMatch bool // q is in what was searched and is the title: a task's summary, a document's name
	createdAt  time.Time
}

// Search finds what the caller may read in its project: tasks (with task:read) whose
// summary or details hold every word of the query by prefix, as a task list's q does;
// messages whose content holds the query, and documents whose name holds it (with
// messaging:read), ASCII case ignored. Each type gives its newest matches, at most the
// limit; then the tasks whose summary and the documents whose name hold the query come
// first (a message's title, its author and conversation, is not searched), newest first
// within each group, and the limit cuts the whole.
func (s *Service) Search(ctx context.Context, p *auth.Principal, in SearchInput) ([]SearchResult, error) {
	if p == nil {
		return nil, errs.Unauth("authentication required")
	}
	readTasks, readMessages := p.Has(auth.TaskRead), p.Has(auth.MessagingRead)
	if !readTasks && !readMessages {
		return nil, errs.Forbid("search needs the %s or %s scope, which the caller does not hold", auth.TaskRead, auth.MessagingRead)
	}
	if n := utf8.RuneCountInString(in.Query); n > MaxSearchQueryChars {
		return nil, errs.Invalid("q is too long: %d characters, at most %d", n, MaxSearchQueryChars)
	}
	q := strings.TrimSpace(in.Query) // what Ctrl+K's box holds may end in a space
	if q == "" {
		return nil, errs.Invalid("q is required: the text to search for")
	}
	limit := in.Limit
	if limit < 1 || limit > MaxSearchLimit {
		return nil, errs.Invalid("limit must be between 1 and %d", MaxSearchLimit)
	}

	var results []SearchResult
	r := s.store.Read()
	if readTasks && len(store.TaskSearchTerms(q)) > 0 {
		if err := s.IndexTaskSearch(ctx); err != nil {
			return nil, internal("index tasks for search", err)
		}
		tasks, _, err := r.Tasks(ctx, store.TaskFilter{ProjectID: p.ProjectID, Query: q, Desc: true, Limit: limit})
		if err != nil {
			return nil, internal("search tasks", err)
		}
		for _, t := range tasks {
			snippet := t.Details
			if snippet == "" {
				snippet = t.Summary
			}
			results = append(results, SearchResult{Type: SearchTask, ID: t.ID, Title: t.Summary,
				Snippet: excerpt(snippet, append([]string{q}, store.TaskSearchTerms(q)...)),
				URL:     "/tasks/" + strconv.FormatInt(t.ID, 10), createdAt: t.CreatedAt, titleMatch: indexFold(t.Summary, q) >= 0})
		}
	}
	if readMessages {
		messages, err := r.SearchMessages(ctx, p.ProjectID, q, limit)
		if err != nil {
			return nil, internal("search messages", err)
		}
		for _, m := range messages {
			results = append(results, SearchResult{Type: SearchMessage, ID: m.ID,
				Title:   m.Author + " in " + conversationTitle(m),
				Snippet: excerpt(m.Text, []string{q}), URL: conversationURL(m), createdAt: m.CreatedAt})
		}
		documents, err := r.SearchDocuments(ctx, p.ProjectID, q, limit)
		if err != nil {
			return nil, internal("search documents", err)
		}
		for _, d := range documents {
			results = append(results, SearchResult{Type: SearchDocument, ID: d.ID, Title: d.Text,
				Snippet: "Shared by " + d.Author + " in " + conversationTitle(d), URL: conversationURL(d), createdAt: d.CreatedAt,
				titleMatch: indexFold(d.Text, q) >= 0})
		}
	}
	slices.SortStableFunc(results, func(a, b SearchResult) int {
		if a.titleMatch != b.titleMatch {
			if a.titleMatch {
				return -1
			}
			return 1
		}
		return b.createdAt.Compare(a.createdAt)
	})
	return results[:min(len(results), limit)], nil
}

func conversationTitle(m store.TextMatch) string {
	return cmp.Or(m.ConversationName, "Conversation "+strconv.FormatInt(m.ConversationID, 10))
}

func conversationURL(m store.TextMatch) string {
	return "/conversations/" + strconv.FormatInt(m.ConversationID, 10)
}

// excerpt is about searchSnippetChars characters of text, on one line, around the first
// of needles found in it (case ignored), or its start when none is.
func excerpt(text string, needles []string) string {
	runes := []rune(strings.Join(strings.Fields(text), " "))
	at := 0
	for _, n := range needles {
		if i := indexFold(string(runes), n); i >= 0 {
			at = utf8.RuneCountInString(string(runes)[:i])
			break
		}
	}
	start := max(0, min(at-searchSnippetChars/3, len(runes)-searchSnippetChars))
	end := min(len(runes), start+searchSnippetChars)
	out := string(runes[start:end])
	if start > 0 {
		out = "…" + out
	}
	if end < len(runes) {
		out += "…"
	}
	return out
}

// indexFold is the byte index of the first instance of substr in s, case ignored, or -1.
func indexFold(s, substr string) int {
	for i := range s {
		if hasPrefixFold(s[i:], substr) {
			return i
		}
	}
	return -1
}

// hasPrefixFold says whether s begins with prefix, case ignored.
func hasPrefixFold(s, prefix string) bool {
	for _, pr := range prefix {
		r, size := utf8.DecodeRuneInString(s)
		if size == 0 || !strings.EqualFold(string(r), string(pr)) {
			return false
		}
		s = s[size:]
	}
	return true
}
