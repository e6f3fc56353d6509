package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync/atomic"
	"syscall"
)

// net/http answers some requests itself, before any handler runs: a malformed request
// line or header (400), headers over MaxHeaderBytes (431), an unknown Transfer-Encoding
// (501), an unsupported HTTP version (505), an Expect other than 100-continue (417). It
// writes those straight onto the connection in text/plain, and http.Server has no hook
// to shape them. So that every answer carries the error envelope, the listener's
// connections are wrapped: from the moment a connection is new or idle (ConnState
// StateNew, or StateIdle once the previous answer is all written) to the moment the
// handler is entered, nothing but net/http itself writes on it, and what it writes
// then is one of those answers. rawConn replaces it with the same status in the
// envelope. Answers of the handler are never touched: it clears the mark before it
// writes anything. (StateActive would not do: net/http reports it only when the
// request's bytes were not already buffered, and a kept-alive connection buffers them.)

type rawConnKey struct{}

// rawConn is a connection of the server's listener.
type rawConn struct {
	net.Conn
	beforeHandler atomic.Bool // new or idle: no handler has the request being read
}

type rawListener struct{ net.Listener }

func (l rawListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err != nil {
		return nil, err
	}
	return &rawConn{Conn: c}, nil
}

// shapeRawErrors sets up srv (whose listener is a rawListener) and returns its handler.
func shapeRawErrors(srv *http.Server, h http.Handler) http.Handler {
	srv.ConnContext = func(ctx context.Context, c net.Conn) context.Context {
		return context.WithValue(ctx, rawConnKey{}, c)
	}
	srv.ConnState = func(c net.Conn, state http.ConnState) {
		if rc, ok := c.(*rawConn); ok && (state == http.StateNew || state == http.StateIdle) {
			rc.beforeHandler.Store(true)
		}
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc, ok := r.Context().Value(rawConnKey{}).(*rawConn); ok {
			rc.beforeHandler.Store(false)
		}
		h.ServeHTTP(w, r)
	})
}

func (c *rawConn) Write(p []byte) (int, error) {
	if !c.beforeHandler.Load() || !bytes.HasPrefix(p, []byte("HTTP/1.")) {
		return c.Conn.Write(p)
	}
	c.beforeHandler.Store(false)
	if _, err := c.Conn.Write(envelopeAnswer(p)); err != nil {
		return 0, err
	}
	return len(p), nil // net/http closes the connection after these answers
}

// CloseWrite and ReadFrom keep what net/http finds on a *net.TCPConn: a half close
// before the connection closes after an error, and sendfile for file bodies.
func (c *rawConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}

func (c *rawConn) ReadFrom(r io.Reader) (int64, error) { return io.Copy(c.Conn, r) }

// SyscallConn gives the event stream the socket itself, for its writes that must not
// wait (events.Hub's writes from the fan-out).
func (c *rawConn) SyscallConn() (syscall.RawConn, error) {
	if sc, ok := c.Conn.(syscall.Conn); ok {
		return sc.SyscallConn()
	}
	return nil, errors.ErrUnsupported
}

// envelopeAnswer rewrites one of net/http's own answers (status line, headers, a short
// text body) as the same status with the error envelope.
func envelopeAnswer(p []byte) []byte {
	status := http.StatusBadRequest
	if len(p) >= 12 {
		if n, err := strconv.Atoi(string(p[9:12])); err == nil && n >= 400 && n <= 599 {
			status = n
		}
	}
	// net/http's text is "400 Bad Request: <detail>" or just "400 Bad Request".
	_, body, _ := bytes.Cut(p, []byte("\r\n\r\n"))
	detail := string(body)
	if _, d, ok := bytes.Cut(body, []byte(": ")); ok {
		detail = string(d)
	} else if len(body) == 0 || bytes.HasPrefix(body, []byte(strconv.Itoa(status))) {
		detail = ""
	}
	code, message := "invalid_argument", "the request is malformed: net/http could not read it"
	switch status {
	case http.StatusRequestHeaderFieldsTooLarge:
		code, message = "payload_too_large", "the request's headers are over the limit of 1 MiB"
	case http.StatusNotImplemented:
		message = "the request's Transfer-Encoding is not supported (chunked is)"
	case http.StatusHTTPVersionNotSupported:
		message = "the request's HTTP version is not supported (HTTP/1.0 and HTTP/1.1 are)"
	case http.StatusExpectationFailed:
		message = "the request's Expect header is not supported (100-continue is)"
	}
	if detail != "" && status == http.StatusBadRequest {
		message = "the request is malformed: " + detail
	}
	b, _ := json.Marshal(map[string]any{"error": map[string]string{"code": code, "message": message}})
	return fmt.Appendf(nil, "HTTP/1.1 %d %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\nConnection: close\r\n\r\n%s",
		status, http.StatusText(status), len(b), b)
}
