package main

import (
	"bytes"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
)

// The raw client against net/http's server: every framing the benchmark can meet, the
// request as the server sees it, and connection reuse.
func TestRawClient(t *testing.T) {
	big := strings.Repeat("0123456789abcdef", 8<<10) // 128 KiB: bigger than the read buffer
	var conns atomic.Int64
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/echo": // Content-Length (a small answer that net/http buffers)
			body, _ := io.ReadAll(r.Body)
			w.Header().Set("X-Auth", r.Header.Get("Authorization"))
			w.WriteHeader(http.StatusCreated)
			io.WriteString(w, r.Method+" "+r.URL.RequestURI()+" "+r.Header.Get("Content-Type")+" "+string(body))
		case "/chunked":
			w.Write([]byte(big[:1000]))
			w.(http.Flusher).Flush() // no Content-Length now: chunked
			w.Write([]byte(big[1000:]))
		case "/empty":
			w.WriteHeader(http.StatusNoContent)
		case "/close":
			w.Header().Set("Connection", "close")
			io.WriteString(w, "bye")
		default:
			http.Error(w, strings.Repeat("x", 500), http.StatusNotFound)
		}
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	c := newRawClient(srv.URL)

	for range 3 {
		status, body, err := c.roundTrip("POST", "/echo?x=1", http.Header{"Authorization": {"Bearer t"}}, []byte(`{"a":1}`), true)
		if err != nil || status != http.StatusCreated || string(body) != `POST /echo?x=1 application/json {"a":1}` {
			t.Fatalf("echo: %d %q %v", status, body, err)
		}
	}
	status, body, err := c.roundTrip("GET", "/chunked", nil, nil, true)
	if err != nil || status != http.StatusOK || string(body) != big {
		t.Fatalf("chunked: %d, %d bytes, %v", status, len(body), err)
	}
	status, body, err = c.roundTrip("GET", "/chunked", nil, nil, false)
	if err != nil || status != http.StatusOK || string(body) != big[:maxSnippet] {
		t.Fatalf("chunked snippet: %d %q %v", status, body, err)
	}
	if status, body, err = c.roundTrip("DELETE", "/empty", nil, nil, true); err != nil || status != http.StatusNoContent || len(body) != 0 {
		t.Fatalf("204: %d %q %v", status, body, err)
	}
	status, body, err = c.roundTrip("GET", "/missing", nil, nil, false)
	if err != nil || status != http.StatusNotFound || !bytes.Equal(body, bytes.Repeat([]byte("x"), maxSnippet)) {
		t.Fatalf("404: %d %q %v", status, body, err)
	}
	if got := conns.Load(); got != 1 {
		t.Fatalf("%d connections for sequential requests, want 1 (kept alive)", got)
	}
	if status, body, err = c.roundTrip("GET", "/close", nil, nil, true); err != nil || string(body) != "bye" {
		t.Fatalf("close: %d %q %v", status, body, err)
	}
	if status, _, err = c.roundTrip("POST", "/echo", nil, []byte(`{}`), true); err != nil || status != http.StatusCreated {
		t.Fatalf("after Connection: close: %d %v", status, err)
	}
	if got := conns.Load(); got != 2 {
		t.Fatalf("%d connections, want 2 (a new one after Connection: close)", got)
	}

	srv.CloseClientConnections() // a dead idle connection fails one request, then the client dials again
	if _, _, err = c.roundTrip("GET", "/echo", nil, nil, true); err == nil {
		t.Fatal("a request on a closed connection succeeded")
	}
	if status, _, err = c.roundTrip("GET", "/echo", nil, nil, true); err != nil || status != http.StatusCreated {
		t.Fatalf("after a failed connection: %d %v", status, err)
	}
}
