package server_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/server"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/testenv"
)

// startWith runs a real server (SQLite file in a temporary directory, loopback) with
// cfg, filling in the directory and the address, and stops it when the test ends.
func startWith(t *testing.T, cfg server.Config) *server.Server {
	t.Helper()
	return testenv.StartWith(t, cfg).Server
}

// adminToken is a platform token with every scope of the server's first project.
func adminToken(t *testing.T, srv *server.Server) string {
	t.Helper()
	ps, err := srv.Service.Projects(context.Background(), auth.Owner(""))
	if err != nil || len(ps) == 0 {
		t.Fatalf("projects: %v %v", ps, err)
	}
	v, _, err := srv.Service.CreateToken(context.Background(), auth.Owner(ps[0].ID),
		service.CreateTokenInput{Name: "test", Type: "platform", Scopes: []string{auth.Admin, auth.TaskRead, auth.TaskWrite}})
	if err != nil {
		t.Fatal(err)
	}
	return v
}

// TestTricklingBodyIsCutOff: a client that sends its headers and then a byte of the body
// now and then is cut off once the body read timeout passes; a body that arrives in
// time is served as usual.
func TestTricklingBodyIsCutOff(t *testing.T) {
	srv := startWith(t, server.Config{BodyReadTimeout: 300 * time.Millisecond})
	token := adminToken(t, srv)
	addr := strings.TrimPrefix(srv.URL(), "http://")

	req, _ := http.NewRequest("POST", srv.URL()+"/api/tasks", strings.NewReader(`{"summary":"in time"}`))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusCreated {
		t.Fatalf("a body sent at once: status %d, want 201", resp.StatusCode)
	}

	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	head := "POST /api/tasks HTTP/1.1\r\nHost: " + addr + "\r\nAuthorization: Bearer " + token +
		"\r\nContent-Type: application/json\r\nContent-Length: 10000\r\n\r\n{"
	if _, err := conn.Write([]byte(head)); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	defer close(stop)
	go func() { // a byte every 50 ms: the body would take over 8 minutes
		tick := time.NewTicker(50 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-tick.C:
			}
			if _, err := conn.Write([]byte(" ")); err != nil {
				return
			}
		}
	}()
	// A bound for the test only, far above the 300 ms (+150 ms for the size) allowed.
	conn.SetReadDeadline(time.Now().Add(20 * time.Second))
	r := bufio.NewReader(conn)
	resp, err = http.ReadResponse(r, nil)
	if errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatal("the server still waits for the trickled body after 20 s")
	}
	if err == nil { // an error answer for the unfinished body, then the connection closes
		resp.Body.Close()
		if resp.StatusCode < 400 {
			t.Fatalf("status %d for a body that never arrived", resp.StatusCode)
		}
		_, err = r.ReadByte()
		if errors.Is(err, os.ErrDeadlineExceeded) {
			t.Fatal("the connection stays open after the body read timed out")
		}
	}
}
