package server_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestNetHTTPErrorsInEnvelope: the answers net/http gives by itself, before any
// handler (malformed request line or header, no Host, headers too large, an unknown
// Transfer-Encoding or Expect, an unsupported version), come in the error envelope with
// their status, on a fresh connection and on one that has served a request already;
// the handler's own answers on the same connections are untouched.
func TestNetHTTPErrorsInEnvelope(t *testing.T) {
	env := testenv.Start(t)
	host := strings.TrimPrefix(env.URL, "http://")
	good := "GET /healthz HTTP/1.1\r\nHost: " + host + "\r\n\r\n"
	cases := []struct {
		name, request string
		status        int
		code          string
	}{
		{"malformed header line", "GET /api/tasks HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n", 400, "invalid_argument"},
		{"space in a header name", "GET /api/tasks HTTP/1.1\r\nHost: x\r\nBad Name: v\r\n\r\n", 400, "invalid_argument"},
		{"control byte in a header value", "GET /api/tasks HTTP/1.1\r\nHost: x\r\nX-A: a\x01b\r\n\r\n", 400, "invalid_argument"},
		{"no Host", "GET /api/tasks HTTP/1.1\r\n\r\n", 400, "invalid_argument"},
		{"two Hosts", "GET /api/tasks HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n", 400, "invalid_argument"},
		{"malformed request line", "GET\r\n\r\n", 400, "invalid_argument"},
		{"bad Content-Length", "POST /api/tasks HTTP/1.1\r\nHost: x\r\nContent-Length: abc\r\n\r\n", 400, "invalid_argument"},
		{"headers too large", "GET /api/tasks HTTP/1.1\r\nHost: x\r\nX-Big: " + strings.Repeat("a", 1<<20+16<<10) + "\r\n\r\n", 431, "payload_too_large"},
		{"unknown Transfer-Encoding", "POST /api/tasks HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip, chunked\r\n\r\n", 501, "invalid_argument"},
		{"unknown Expect", "POST /api/tasks HTTP/1.1\r\nHost: x\r\nExpect: coffee\r\nContent-Length: 2\r\n\r\n{}", 417, "invalid_argument"},
		{"HTTP/2.0 request line", "GET /api/tasks HTTP/2.0\r\nHost: x\r\n\r\n", 505, "invalid_argument"},
	}
	for _, c := range cases {
		for _, after := range []bool{false, true} {
			conn, err := net.Dial("tcp", host)
			if err != nil {
				t.Fatal(err)
			}
			conn.SetDeadline(time.Now().Add(20 * time.Second))
			rd := bufio.NewReader(conn)
			if after { // the same connection has served a request already
				fmt.Fprint(conn, good)
				resp, err := http.ReadResponse(rd, nil)
				if err != nil || resp.StatusCode != 200 {
					t.Fatalf("%s: the good request first: %v", c.name, err)
				}
				io.Copy(io.Discard, resp.Body)
				if ct := resp.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
					t.Fatalf("the handler's answer was touched: %q", ct)
				}
			}
			go fmt.Fprint(conn, c.request) // the server may answer before reading it all
			resp, err := http.ReadResponse(rd, nil)
			if err != nil {
				t.Errorf("%s (after a request: %v): %v", c.name, after, err)
				conn.Close()
				continue
			}
			body, _ := io.ReadAll(resp.Body)
			conn.Close()
			var envelope struct {
				Error struct{ Code, Message string } `json:"error"`
			}
			jsonErr := json.Unmarshal(body, &envelope)
			if resp.StatusCode != c.status || jsonErr != nil || envelope.Error.Code != c.code || envelope.Error.Message == "" ||
				resp.Header.Get("Content-Type") != "application/json" {
				t.Errorf("%s (after a request: %v): %d %q %s; want %d with code %s", c.name, after, resp.StatusCode, resp.Header.Get("Content-Type"), body, c.status, c.code)
			}
		}
	}
}
