package api

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/service"
)

// A list asked for without limit is the whole list (the contract). It goes out row by
// row: read in pages of streamBatch by id (keyset, as a client pages), each row written
// as soon as it is encoded, so a list of a million tasks costs the server one page of
// memory, not the whole answer. Paging by id rather than holding one cursor open keeps no
// read transaction open while a slow client reads (which would hold back WAL
// checkpoints); the bytes are those the list had when it was built in memory.

// streamBatch is the number of rows read at a time for a whole list.
const streamBatch = 500

// answerList answers a list request: one page when page.Limit is set (with a Link
// rel="next" header while more remain), else the whole list, streamed. read reads one
// page; appendJSON appends one item's JSON exactly as the whole list holds it.
func answerList[T any](c *gin.Context, page service.PageInput, read func(service.PageInput) ([]T, bool, error),
	lastID func(T) int64, appendJSON func([]byte, T) ([]byte, error)) error {
	if page.Limit > 0 {
		items, more, err := read(page)
		if err != nil {
			return err
		}
		if more && len(items) > 0 {
			setNextLink(c, lastID(items[len(items)-1]))
		}
		bufp := listBuffers.Get().(*[]byte)
		defer listBuffers.Put(bufp)
		buf, err := appendArray((*bufp)[:0], items, appendJSON)
		if err != nil {
			return err
		}
		*bufp = buf
		c.Header("Content-Length", strconv.Itoa(len(buf))) // one write, not chunks
		c.Data(http.StatusOK, "application/json; charset=utf-8", buf)
		return nil
	}
	return streamList(c, page.AfterID, read, lastID, appendJSON)
}

// appendArray appends the JSON array of items.
func appendArray[T any](buf []byte, items []T, appendJSON func([]byte, T) ([]byte, error)) ([]byte, error) {
	buf = append(buf, '[')
	for i, it := range items {
		if i > 0 {
			buf = append(buf, ',')
		}
		var err error
		if buf, err = appendJSON(buf, it); err != nil {
			return nil, err
		}
	}
	return append(buf, ']'), nil
}

// streamList writes the whole list after the id after, page by page. The first page is
// read before anything is sent, so that a bad request or a failed read still gets its
// status and error envelope. A read that fails later can no longer change the status:
// the connection is cut, so that the client sees a truncated answer rather than a short
// list that looks complete. A client that goes away ends the reads (the request's
// context, and the failed write).
func streamList[T any](c *gin.Context, after int64, read func(service.PageInput) ([]T, bool, error),
	lastID func(T) int64, appendJSON func([]byte, T) ([]byte, error)) error {
	items, more, err := read(service.PageInput{AfterID: after, Limit: streamBatch})
	if err != nil {
		return err
	}
	c.Header("Content-Type", "application/json; charset=utf-8")
	c.Status(http.StatusOK)
	w := bufio.NewWriterSize(c.Writer, 32<<10)
	buf := make([]byte, 0, 4<<10)
	sep := byte('[')
	for {
		for _, it := range items {
			buf = append(buf[:0], sep)
			sep = ','
			if buf, err = appendJSON(buf, it); err != nil {
				abortStream(c, err)
			}
			if _, err := w.Write(buf); err != nil {
				return nil // the client went away
			}
		}
		if !more || len(items) == 0 {
			break
		}
		items, more, err = read(service.PageInput{AfterID: lastID(items[len(items)-1]), Limit: streamBatch})
		if err != nil {
			if c.Request.Context().Err() != nil {
				return nil // the client went away
			}
			abortStream(c, err)
		}
	}
	if sep == '[' { // no items at all
		_ = w.WriteByte('[')
	}
	_ = w.WriteByte(']')
	_ = w.Flush()
	return nil
}

// abortStream cuts a streamed answer whose status has gone already.
func abortStream(c *gin.Context, err error) {
	if !errors.Is(err, context.Canceled) {
		slog.Error("a streamed list failed after its first rows; the connection is cut", "path", c.Request.URL.Path, "err", err)
	}
	panic(http.ErrAbortHandler) // net/http closes the connection without ending the body
}

// appendJSONOf appends v's JSON as c.JSON writes it (encoding/json, HTML escaped).
func appendJSONOf[T any](buf []byte, v T) ([]byte, error) {
	b, err := json.Marshal(&v) // as an element of a slice: addressable
	return append(buf, b...), err
}
