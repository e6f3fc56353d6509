package client

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Conversation, Message and Document are as the API returns them.
type (
	Conversation = model.Conversation
	Message      = model.Message
	Document     = model.Document
)

// Page pages a list: at most Limit items (0: all) after AfterID.
type Page struct {
	Limit   int
	AfterID int64
}

func (p Page) query() string {
	q := url.Values{}
	if p.Limit > 0 {
		q.Set("limit", strconv.Itoa(p.Limit))
	}
	if p.AfterID > 0 {
		q.Set("after_id", strconv.FormatInt(p.AfterID, 10))
	}
	if len(q) == 0 {
		return ""
	}
	return "?" + q.Encode()
}

// conversations is the path of a project's conversations; a token client names its
// project explicitly, an agent client uses its own.
func (c *Client) conversations(projectID string) string {
	if projectID == "" {
		projectID = c.projectID
	}
	return "/api/projects/" + url.PathEscape(projectID) + "/conversations"
}

// CreateConversation starts a conversation with its first message; name may be "".
// The caller becomes a participant. projectID may be "" for agent clients.
func (c *Client) CreateConversation(ctx context.Context, projectID, message, name string, opts ...RequestOption) (*Conversation, error) {
	body := map[string]string{"message": message}
	if name != "" {
		body["name"] = name
	}
	var out Conversation
	_, err := c.do(ctx, "POST", c.conversations(projectID), body, &out, opts...)
	return &out, err
}

// ListConversations lists a project's conversations, oldest first.
func (c *Client) ListConversations(ctx context.Context, projectID string, p Page) ([]Conversation, error) {
	var out []Conversation
	_, err := c.do(ctx, "GET", c.conversations(projectID)+p.query(), nil, &out)
	return out, err
}

// SendMessage posts a message; conversation is the integer id or the uuid.
func (c *Client) SendMessage(ctx context.Context, projectID, conversation, message string, opts ...RequestOption) (*Message, error) {
	var out Message
	_, err := c.do(ctx, "POST", c.conversations(projectID)+"/"+url.PathEscape(conversation)+"/messages",
		map[string]string{"message": message}, &out, opts...)
	return &out, err
}

// ListMessages lists a conversation's messages, oldest first.
func (c *Client) ListMessages(ctx context.Context, projectID, conversation string, p Page) ([]Message, error) {
	var out []Message
	_, err := c.do(ctx, "GET", c.conversations(projectID)+"/"+url.PathEscape(conversation)+"/messages"+p.query(), nil, &out)
	return out, err
}

// ConversationTasks lists the tasks linked to a conversation.
func (c *Client) ConversationTasks(ctx context.Context, projectID, conversation string, p Page) ([]Task, error) {
	var out []Task
	_, err := c.do(ctx, "GET", c.conversations(projectID)+"/"+url.PathEscape(conversation)+"/tasks"+p.query(), nil, &out)
	return out, err
}

// ListDocuments lists the documents shared in a conversation.
func (c *Client) ListDocuments(ctx context.Context, projectID, conversation string, p Page) ([]Document, error) {
	var out []Document
	_, err := c.do(ctx, "GET", c.conversations(projectID)+"/"+url.PathEscape(conversation)+"/documents"+p.query(), nil, &out)
	return out, err
}

// UploadDocument shares a file in a conversation (at most 25 MiB).
func (c *Client) UploadDocument(ctx context.Context, projectID, conversation, name string, content io.Reader) (*Document, error) {
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	part, err := w.CreateFormFile("file", name)
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(part, content); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, "POST", c.base+c.conversations(projectID)+"/"+url.PathEscape(conversation)+"/documents", &buf)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", w.FormDataContentType())
	c.authenticate(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return nil, decodeError(resp)
	}
	var out Document
	if err := decodeJSON(resp.Body, &out); err != nil {
		return nil, fmt.Errorf("agentdesk: decode document: %w", err)
	}
	return &out, nil
}

// DownloadDocument returns a document's bytes; doc.URL is its path.
func (c *Client) DownloadDocument(ctx context.Context, doc *Document) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, "GET", c.base+doc.URL, nil)
	if err != nil {
		return nil, err
	}
	c.authenticate(req)
	resp, err := c.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode >= 300 {
		return nil, decodeError(resp)
	}
	return io.ReadAll(resp.Body)
}
