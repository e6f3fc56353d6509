package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"
)

// rawClient sends the benchmark's requests over keep-alive HTTP/1.1 connections that it
// writes and reads itself, one request at a time per connection, as wrk does.
//
// Why not net/http's client: the load generator shares this 2-core machine with the
// server, and every CPU cycle it spends is one the server does not get. net/http's
// Transport hands each request between three goroutines (the caller, a connection's
// write loop and its read loop), which cost the load generator about 70 µs of CPU per
// request here; writing the request and reading the answer on the caller's goroutine
// costs a fraction of that. The answer is still read in full and checked: the status
// line, Content-Length or chunked framing, and the body.
type rawClient struct {
	addr string // host:port, dialled and sent as the Host header

	mu   sync.Mutex
	idle []*rawConn // connections not in use; a request takes one or dials
}

type rawConn struct {
	nc  net.Conn
	br  *bufio.Reader
	req []byte // the request being written, reused
}

// newRawClient talks to base, an http:// URL such as http://127.0.0.1:8080.
func newRawClient(base string) *rawClient {
	return &rawClient{addr: strings.TrimPrefix(base, "http://")}
}

// maxSnippet is how much of an answer's body is kept when the caller does not want it
// all: enough for an error message.
const maxSnippet = 200

// roundTrip sends one request and reads its answer. It returns the status and the body
// (all of it when wantBody, else its first maxSnippet bytes). A connection that fails is
// closed; the next request dials a new one.
func (rc *rawClient) roundTrip(method, path string, header http.Header, body []byte, wantBody bool) (int, []byte, error) {
	c, err := rc.get()
	if err != nil {
		return 0, nil, err
	}
	status, respBody, reusable, err := c.roundTrip(rc.addr, method, path, header, body, wantBody)
	if err != nil || !reusable {
		c.nc.Close()
	} else {
		rc.put(c)
	}
	return status, respBody, err
}

func (rc *rawClient) get() (*rawConn, error) {
	rc.mu.Lock()
	if n := len(rc.idle); n > 0 {
		c := rc.idle[n-1]
		rc.idle = rc.idle[:n-1]
		rc.mu.Unlock()
		return c, nil
	}
	rc.mu.Unlock()
	nc, err := net.DialTimeout("tcp", rc.addr, 10*time.Second)
	if err != nil {
		return nil, err
	}
	return &rawConn{nc: nc, br: bufio.NewReaderSize(nc, 32<<10)}, nil
}

func (rc *rawClient) put(c *rawConn) {
	rc.mu.Lock()
	rc.idle = append(rc.idle, c)
	rc.mu.Unlock()
}

// roundTrip writes the request and reads the answer; reusable says whether the
// connection can carry another request.
func (c *rawConn) roundTrip(host, method, path string, header http.Header, body []byte, wantBody bool) (status int, respBody []byte, reusable bool, err error) {
	if err := c.nc.SetDeadline(time.Now().Add(30 * time.Second)); err != nil {
		return 0, nil, false, err
	}
	b := append(c.req[:0], method...)
	b = append(b, ' ')
	b = append(b, path...)
	b = append(b, " HTTP/1.1\r\nHost: "...)
	b = append(b, host...)
	b = append(b, "\r\n"...)
	for name, values := range header {
		for _, v := range values {
			b = append(b, name...)
			b = append(b, ": "...)
			b = append(b, v...)
			b = append(b, "\r\n"...)
		}
	}
	if body != nil {
		b = append(b, "Content-Type: application/json\r\nContent-Length: "...)
		b = strconv.AppendInt(b, int64(len(body)), 10)
		b = append(b, "\r\n"...)
	}
	b = append(b, "\r\n"...)
	b = append(b, body...)
	c.req = b
	if _, err := c.nc.Write(b); err != nil {
		return 0, nil, false, err
	}
	return c.readResponse(wantBody)
}

var errBadResponse = errors.New("raw client: malformed HTTP response")

func (c *rawConn) readResponse(wantBody bool) (status int, body []byte, reusable bool, err error) {
	line, err := c.line()
	if err != nil {
		return 0, nil, false, err
	}
	// HTTP/1.1 201 Created
	if len(line) < 12 || !bytes.HasPrefix(line, []byte("HTTP/1.")) || line[8] != ' ' {
		return 0, nil, false, fmt.Errorf("%w: status line %q", errBadResponse, line)
	}
	status, err = strconv.Atoi(string(line[9:12]))
	if err != nil {
		return 0, nil, false, fmt.Errorf("%w: status line %q", errBadResponse, line)
	}
	length, chunked, closing := int64(-1), false, false
	for {
		line, err := c.line()
		if err != nil {
			return 0, nil, false, err
		}
		if len(line) == 0 {
			break
		}
		name, value, ok := bytes.Cut(line, []byte(":"))
		if !ok {
			return 0, nil, false, fmt.Errorf("%w: header %q", errBadResponse, line)
		}
		value = bytes.TrimSpace(value)
		switch {
		case bytes.EqualFold(name, []byte("Content-Length")):
			if length, err = strconv.ParseInt(string(value), 10, 64); err != nil || length < 0 {
				return 0, nil, false, fmt.Errorf("%w: Content-Length %q", errBadResponse, value)
			}
		case bytes.EqualFold(name, []byte("Transfer-Encoding")):
			chunked = bytes.EqualFold(value, []byte("chunked"))
		case bytes.EqualFold(name, []byte("Connection")):
			closing = bytes.EqualFold(value, []byte("close"))
		}
	}
	var sink bodySink
	sink.all = wantBody
	switch {
	case status == http.StatusNoContent || status == http.StatusNotModified || status < 200:
	case chunked:
		if err := c.readChunked(&sink); err != nil {
			return 0, nil, false, err
		}
	case length >= 0:
		if err := sink.copy(c.br, length); err != nil {
			return 0, nil, false, err
		}
	default: // the body runs to the end of the connection
		if _, err := io.Copy(&sink, c.br); err != nil {
			return 0, nil, false, err
		}
		closing = true
	}
	return status, sink.buf, !closing, nil
}

// line reads one header line without its CRLF. The bytes are valid until the next read.
func (c *rawConn) line() ([]byte, error) {
	line, err := c.br.ReadSlice('\n')
	if err != nil {
		if errors.Is(err, bufio.ErrBufferFull) {
			return nil, fmt.Errorf("%w: header line too long", errBadResponse)
		}
		return nil, err
	}
	return bytes.TrimRight(line, "\r\n"), nil
}

func (c *rawConn) readChunked(sink *bodySink) error {
	for {
		line, err := c.line()
		if err != nil {
			return err
		}
		size, _, _ := bytes.Cut(line, []byte(";"))
		n, err := strconv.ParseInt(string(bytes.TrimSpace(size)), 16, 64)
		if err != nil || n < 0 {
			return fmt.Errorf("%w: chunk size %q", errBadResponse, line)
		}
		if n == 0 {
			for { // trailers, then the empty line
				line, err := c.line()
				if err != nil {
					return err
				}
				if len(line) == 0 {
					return nil
				}
			}
		}
		if err := sink.copy(c.br, n); err != nil {
			return err
		}
		if crlf, err := c.line(); err != nil || len(crlf) != 0 {
			return fmt.Errorf("%w: no CRLF after a chunk", errBadResponse)
		}
	}
}

// bodySink keeps a body (all of it, or its first maxSnippet bytes).
type bodySink struct {
	all bool
	buf []byte
}

func (s *bodySink) Write(p []byte) (int, error) {
	keep := p
	if !s.all {
		keep = p[:min(len(p), max(0, maxSnippet-len(s.buf)))]
	}
	s.buf = append(s.buf, keep...)
	return len(p), nil
}

// copy reads exactly n bytes of body from r.
func (s *bodySink) copy(r *bufio.Reader, n int64) error {
	for n > 0 {
		chunk, err := r.Peek(int(min(n, int64(r.Size()))))
		if len(chunk) == 0 && err != nil {
			if errors.Is(err, io.EOF) {
				err = io.ErrUnexpectedEOF
			}
			return err
		}
		s.Write(chunk)
		if _, err := r.Discard(len(chunk)); err != nil {
			return err
		}
		n -= int64(len(chunk))
	}
	return nil
}
