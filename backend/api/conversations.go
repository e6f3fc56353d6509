package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// conversationsHandler serves the Conversations REST interface, under
// /api/projects/{projectId}/conversations, for users (Bearer) and agents (headers).
type conversationsHandler struct{ svc *service.Service }

// maxUploadBody bounds a whole document upload: the document plus the multipart framing.
const maxUploadBody = service.MaxDocumentSize + 1<<20

// conversationRef is the {conversationId} of the path: an integer id or a uuid.
func conversationRef(c *gin.Context) string { return c.Param("conversationId") }

// pageInput reads the optional limit and after_id query parameters.
func pageInput(c *gin.Context) (service.PageInput, error) {
	var in service.PageInput
	if v, ok, err := queryInt(c, "limit"); err != nil {
		return in, err
	} else if ok {
		if v < 1 || v > service.MaxListLimit {
			return in, errs.Invalid("limit must be between 1 and %d", service.MaxListLimit)
		}
		in.Limit = int(v)
	}
	v, _, err := queryInt(c, "after_id")
	if err != nil {
		return in, err
	}
	if v < 0 {
		return in, errs.Invalid("after_id must not be negative")
	}
	in.AfterID = v
	return in, nil
}

// setNextLink points the Link header at the page after the item lastID.
func setNextLink(c *gin.Context, lastID int64) { setPageLink(c, "after_id", lastID) }

// setPageLink points the Link header at the next page: this request with param set to
// the last item's id.
func setPageLink(c *gin.Context, param string, lastID int64) {
	q := c.Request.URL.Query()
	q.Set(param, strconv.FormatInt(lastID, 10))
	next := url.URL{Path: c.Request.URL.Path, RawQuery: q.Encode()}
	c.Header("Link", "<"+next.String()+`>; rel="next"`)
}

// listBuffers recycles the buffers task lists are assembled in (tens of KiB each).
var listBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 64<<10); return &b }}

// writeObject answers v with status, or the error (for handlers that answer errors
// themselves, with fail, rather than return them to handle).
func writeObject(c *gin.Context, status int, v any, err error) {
	if err != nil {
		fail(c, err)
		return
	}
	c.JSON(status, v)
}

// create serves POST /api/projects/{projectId}/conversations.
func (h conversationsHandler) create(c *gin.Context) error {
	var in service.CreateConversationInput
	if err := bindJSON(c, &in, false); err != nil {
		return err
	}
	conv, err := h.svc.CreateConversation(c.Request.Context(), principal(c), in, idempotencyKey(c))
	if err != nil {
		return err
	}
	c.Header("Location", fmt.Sprintf("/api/projects/%s/conversations/%d", conv.ProjectID, conv.ID))
	c.JSON(http.StatusCreated, conv)
	return nil
}

// list serves GET /api/projects/{projectId}/conversations.
func (h conversationsHandler) list(c *gin.Context) error {
	page, err := pageInput(c)
	if err != nil {
		return err
	}
	read := func(pg service.PageInput) ([]model.Conversation, bool, error) {
		return h.svc.ListConversations(c.Request.Context(), principal(c), pg)
	}
	return answerList(c, page, read, func(v model.Conversation) int64 { return v.ID }, appendJSONOf)
}

// get serves GET /api/projects/{projectId}/conversations/{conversationId}.
func (h conversationsHandler) get(c *gin.Context) error {
	conv, err := h.svc.GetConversation(c.Request.Context(), principal(c), conversationRef(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusOK, conv)
	return nil
}

// postMessage serves POST .../conversations/{conversationId}/messages.
func (h conversationsHandler) postMessage(c *gin.Context) error {
	var in service.PostMessageInput
	if err := bindJSON(c, &in, false); err != nil {
		return err
	}
	msg, err := h.svc.PostMessage(c.Request.Context(), principal(c), conversationRef(c), in, idempotencyKey(c))
	if err != nil {
		return err
	}
	c.JSON(http.StatusCreated, msg)
	return nil
}

// markRead serves PUT .../conversations/{conversationId}/read: the caller's read
// marker moves forward to a message of the conversation.
func (h conversationsHandler) markRead(c *gin.Context) error {
	var in service.MarkReadInput
	if err := bindJSON(c, &in, false); err != nil {
		return err
	}
	if err := h.svc.MarkRead(c.Request.Context(), principal(c), conversationRef(c), in); err != nil {
		return err
	}
	c.Status(http.StatusNoContent)
	return nil
}

// listMessages serves GET .../conversations/{conversationId}/messages.
func (h conversationsHandler) listMessages(c *gin.Context) error {
	return conversationList(c, h.svc.ListMessages, func(v model.Message) int64 { return v.ID })
}

// tasks serves GET .../conversations/{conversationId}/tasks.
func (h conversationsHandler) tasks(c *gin.Context) error {
	return conversationList(c, h.svc.ConversationTasks, func(v model.Task) int64 { return v.ID })
}

// listDocuments serves GET .../conversations/{conversationId}/documents.
func (h conversationsHandler) listDocuments(c *gin.Context) error {
	return conversationList(c, h.svc.ListDocuments, func(v model.Document) int64 { return v.ID })
}

// conversationList answers a page of one of a conversation's lists, read by list.
func conversationList[T any](c *gin.Context, list func(context.Context, *auth.Principal, string, service.PageInput) ([]T, bool, error), lastID func(T) int64) error {
	page, err := pageInput(c)
	if err != nil {
		return err
	}
	read := func(pg service.PageInput) ([]T, bool, error) {
		return list(c.Request.Context(), principal(c), conversationRef(c), pg)
	}
	return answerList(c, page, read, lastID, appendJSONOf)
}

// uploadDocument serves POST .../conversations/{conversationId}/documents: a
// multipart/form-data body whose part "file" is the document. The part is streamed to
// the service, which checks scope and conversation before reading it.
func (h conversationsHandler) uploadDocument(c *gin.Context) error {
	if err := checkUploadSize(c); err != nil {
		return err
	}
	mt, params, err := mime.ParseMediaType(c.GetHeader("Content-Type"))
	if err != nil || mt != "multipart/form-data" || params["boundary"] == "" {
		return errs.Invalid("a document upload must be multipart/form-data with the document in the part named file")
	}
	part, err := filePart(c, params["boundary"])
	if err != nil {
		return err
	}
	defer part.Close()
	doc, err := h.svc.ShareDocument(c.Request.Context(), principal(c), conversationRef(c), service.DocumentUpload{
		Name:     part.FileName(),
		MimeType: part.Header.Get("Content-Type"),
		Body:     uploadReader{part},
	})
	if err != nil {
		return err
	}
	c.Header("Location", doc.URL)
	c.JSON(http.StatusCreated, doc)
	return nil
}

// uploadReader turns the read errors of an upload into errors with a status.
type uploadReader struct{ r io.Reader }

func (u uploadReader) Read(p []byte) (int, error) {
	n, err := u.r.Read(p)
	if err != nil && err != io.EOF {
		err = uploadError(err)
	}
	return n, err
}

// checkUploadSize refuses, before reading it, an upload whose declared length is over
// maxUploadBody (a body without a length is cut at that size as it is read).
func checkUploadSize(c *gin.Context) error {
	if c.Request.ContentLength > maxUploadBody {
		return errs.TooLarge("the upload is %d bytes; a document may have at most %d bytes (25 MiB)", c.Request.ContentLength, service.MaxDocumentSize)
	}
	return nil
}

// filePart reads a multipart upload (at most maxUploadBody bytes) up to its part named
// file, the field every document upload takes.
func filePart(c *gin.Context, boundary string) (*multipart.Part, error) {
	mr := multipart.NewReader(http.MaxBytesReader(c.Writer, c.Request.Body, maxUploadBody), boundary)
	for {
		part, err := mr.NextPart()
		if err == io.EOF {
			return nil, errs.Invalid("the upload has no part named file; send the document as the multipart field file")
		}
		if err != nil {
			return nil, uploadError(err)
		}
		if part.FormName() == "file" {
			return part, nil
		}
		part.Close()
	}
}

func uploadError(err error) error {
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return errs.TooLarge("the upload is over the limit: a document may have at most %d bytes (25 MiB)", service.MaxDocumentSize)
	}
	return errs.Invalid("malformed multipart upload: %v", err)
}

// downloadDocument serves GET .../conversations/{conversationId}/documents/{docId}: the
// document's bytes, with its type, as an attachment under its name.
func (h conversationsHandler) downloadDocument(c *gin.Context) error {
	id, err := pathID(c, "docId", "document id")
	if err != nil {
		return err
	}
	doc, content, err := h.svc.GetDocument(c.Request.Context(), principal(c), conversationRef(c), id)
	if err != nil {
		return err
	}
	c.Header("Content-Disposition", attachment(doc.Name))
	c.Header("X-Content-Type-Options", "nosniff")
	c.Header("Content-Security-Policy", "sandbox")
	c.Header("Cache-Control", "private, no-cache")
	c.Data(http.StatusOK, doc.MimeType, content)
	return nil
}

// attachment is a Content-Disposition value offering name as the download's file name:
// a quoted ASCII filename, plus an RFC 5987 filename* when the name is not plain ASCII.
func attachment(name string) string {
	ascii := true
	fallback := []rune(name)
	for i, r := range fallback {
		if r < 0x20 || r > 0x7e {
			ascii = false
			fallback[i] = '_'
		}
	}
	v := mime.FormatMediaType("attachment", map[string]string{"filename": string(fallback)})
	if v == "" {
		v = "attachment"
	}
	if !ascii {
		v += "; filename*=UTF-8''" + rfc5987(name)
	}
	return v
}

// rfc5987 percent-encodes s as an RFC 5987 ext-value (after the charset and language).
func rfc5987(s string) string {
	const attrChar = "!#$&+-.^_`|~"
	var sb strings.Builder
	for i := 0; i < len(s); i++ {
		b := s[i]
		if b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte(attrChar, b) >= 0 {
			sb.WriteByte(b)
			continue
		}
		sb.WriteString("%" + strings.ToUpper(strconv.FormatUint(uint64(b)>>4, 16)+strconv.FormatUint(uint64(b)&0xf, 16)))
	}
	return sb.String()
}
