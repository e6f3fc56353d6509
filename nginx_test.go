package main

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"math/big"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/testenv"
)

// TestNginxProxy runs the nginx site that docs/team.md documents, taken from the page
// itself, in front of a real agentdesk: REST, the event stream and a GraphQL WebSocket
// through it, a 20 MiB document upload, and the redirect from http to https. Only the
// addresses and the certificate are changed. Skipped where nginx is not installed.
func TestNginxProxy(t *testing.T) {
	nginx, err := exec.LookPath("nginx")
	if err != nil {
		t.Skip("nginx is not installed (apt-get install nginx): the documented nginx site is not tested")
	}
	data := t.TempDir()
	var p struct{ ID string }
	if err := json.Unmarshal([]byte(mustCLI(t, "project", "create", "--name", "p", "--data", data)), &p); err != nil {
		t.Fatal(err)
	}
	token := strings.TrimSpace(mustCLI(t, "token", "create", "--project", p.ID, "--name", "t",
		"--scopes", "task:read,task:write,messaging:read,messaging:write", "--data", data))
	const publicURL = "https://agentdesk.example.com"
	t.Setenv("AGENTDESK_PUBLIC_URL", publicURL) // the server inherits it
	srv := startServer(t, data)

	dir := t.TempDir()
	certPEM := writeTestCert(t, dir)
	httpPort, httpsPort := freePort(t), freePort(t)
	site := documentedNginxSite(t, map[string]string{
		"listen 80;":           fmt.Sprintf("listen 127.0.0.1:%d;", httpPort),
		"listen [::]:80;":      "",
		"listen 443 ssl;":      fmt.Sprintf("listen 127.0.0.1:%d ssl;", httpsPort),
		"listen [::]:443 ssl;": "",
		"/etc/letsencrypt/live/agentdesk.example.com/fullchain.pem": filepath.Join(dir, "cert.pem"),
		"/etc/letsencrypt/live/agentdesk.example.com/privkey.pem":   filepath.Join(dir, "key.pem"),
		"http://127.0.0.1:8080": srv.url,
	})
	startNginx(t, nginx, dir, site, httpsPort)

	roots := x509.NewCertPool()
	roots.AppendCertsFromPEM(certPEM)
	tlsConfig := &tls.Config{RootCAs: roots}
	client := &http.Client{
		Transport:     &http.Transport{TLSClientConfig: tlsConfig},
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		Timeout:       time.Minute,
	}
	base := fmt.Sprintf("https://127.0.0.1:%d", httpsPort)
	do := func(method, path, contentType string, body io.Reader) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, body)
		req.Header.Set("Authorization", "Bearer "+token)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer resp.Body.Close()
		raw, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, raw
	}

	if code, body := do("GET", "/healthz", "", nil); code != 200 || !strings.Contains(string(body), `"ok"`) {
		t.Fatalf("GET /healthz through nginx: %d %s", code, body)
	}
	resp, err := client.Get(fmt.Sprintf("http://127.0.0.1:%d/api/tasks", httpPort))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusMovedPermanently || !strings.HasPrefix(resp.Header.Get("Location"), "https://") {
		t.Errorf("plain http: %d Location %q, want 301 to https", resp.StatusCode, resp.Header.Get("Location"))
	}

	// The event stream, as a browser on the public URL opens it; another origin is refused.
	wsBase := strings.Replace(base, "https://", "wss://", 1)
	dialer := websocket.Dialer{TLSClientConfig: tlsConfig, HandshakeTimeout: 10 * time.Second}
	if conn, resp, _ := dialer.Dial(wsBase+"/api/events", http.Header{"Authorization": {"Bearer " + token}, "Origin": {"https://other.example.com"}}); conn != nil || resp == nil || resp.StatusCode != 403 {
		t.Errorf("event stream from another origin: %v, want 403", resp)
	}
	conn, resp, err := dialer.Dial(wsBase+"/api/events", http.Header{"Authorization": {"Bearer " + token}, "Origin": {publicURL}})
	if err != nil {
		t.Fatalf("event stream through nginx: %v (%v)", err, resp)
	}
	defer conn.Close()
	if code, body := do("POST", "/api/tasks", "application/json", strings.NewReader(`{"summary":"through nginx"}`)); code != 201 {
		t.Fatalf("POST /api/tasks through nginx: %d %s", code, body)
	}
	conn.SetReadDeadline(time.Now().Add(30 * time.Second)) // a bound on a broken proxy, not a timing
	for {
		var ev struct {
			Type string
			Data struct{ Summary string }
		}
		if err := conn.ReadJSON(&ev); err != nil {
			t.Fatalf("event stream through nginx: %v", err)
		}
		if ev.Type == "task.created" && ev.Data.Summary == "through nginx" {
			break
		}
	}

	// A GraphQL WebSocket (graphql-transport-ws) gets its connection_ack.
	gdialer := dialer
	gdialer.Subprotocols = []string{"graphql-transport-ws"}
	gconn, resp, err := gdialer.Dial(wsBase+"/graphql", http.Header{"Origin": {publicURL}})
	if err != nil {
		t.Fatalf("GraphQL WebSocket through nginx: %v (%v)", err, resp)
	}
	defer gconn.Close()
	if err := gconn.WriteJSON(map[string]any{"type": "connection_init", "payload": map[string]string{"Authorization": "Bearer " + token}}); err != nil {
		t.Fatal(err)
	}
	gconn.SetReadDeadline(time.Now().Add(30 * time.Second))
	var ack struct{ Type string }
	if err := gconn.ReadJSON(&ack); err != nil || ack.Type != "connection_ack" {
		t.Fatalf("GraphQL WebSocket through nginx: %+v, %v; want connection_ack", ack, err)
	}

	// A 20 MiB document: over nginx's default body limit, under agentdesk's.
	code, body := do("POST", "/api/projects/"+p.ID+"/conversations", "application/json", strings.NewReader(`{"message":"uploads"}`))
	if code != 201 {
		t.Fatalf("create conversation: %d %s", code, body)
	}
	var conv struct{ ID int }
	json.Unmarshal(body, &conv)
	doc := make([]byte, 20<<20)
	rand.Read(doc)
	var form bytes.Buffer
	mw := multipart.NewWriter(&form)
	part, _ := mw.CreateFormFile("file", "big.bin")
	part.Write(doc)
	mw.Close()
	docs := fmt.Sprintf("/api/projects/%s/conversations/%d/documents", p.ID, conv.ID)
	code, body = do("POST", docs, mw.FormDataContentType(), &form)
	if code != 201 {
		t.Fatalf("20 MiB upload through nginx: %d %s", code, body)
	}
	var up struct {
		ID   int
		Size int
	}
	json.Unmarshal(body, &up)
	if up.Size != len(doc) {
		t.Errorf("uploaded size %d, want %d", up.Size, len(doc))
	}
	if code, got := do("GET", fmt.Sprintf("%s/%d", docs, up.ID), "", nil); code != 200 || !bytes.Equal(got, doc) {
		t.Errorf("download through nginx: %d, %d bytes, same: %v", code, len(got), bytes.Equal(got, doc))
	}
}

// documentedNginxSite is the ```nginx block of docs/team.md with each key, which must
// appear exactly once, replaced by its value (a line that becomes empty is dropped).
func documentedNginxSite(t *testing.T, replace map[string]string) string {
	t.Helper()
	page, err := os.ReadFile("docs/team.md")
	if err != nil {
		t.Fatal(err)
	}
	_, block, ok := strings.Cut(string(page), "```nginx\n")
	if block, _, ok = strings.Cut(block, "\n```"); !ok {
		t.Fatal("docs/team.md has no ```nginx block")
	}
	for old, repl := range replace {
		if n := strings.Count(block, old); n != 1 {
			t.Fatalf("docs/team.md's nginx block has %q %d times, not once: update TestNginxProxy", old, n)
		}
		block = strings.Replace(block, old, repl, 1)
	}
	var out []string
	for _, line := range strings.Split(block, "\n") {
		if strings.TrimSpace(line) != "" || line == "" {
			out = append(out, line)
		}
	}
	return strings.Join(out, "\n") + "\n"
}

// startNginx runs nginx in the foreground as one process (no workers, so no change of
// user), with everything it writes under dir, until the test ends.
func startNginx(t *testing.T, nginx, dir, site string, httpsPort int) {
	t.Helper()
	if err := os.WriteFile(filepath.Join(dir, "site.conf"), []byte(site), 0o600); err != nil {
		t.Fatal(err)
	}
	conf := fmt.Sprintf(`daemon off;
master_process off;
pid %[1]s/nginx.pid;
error_log stderr notice;
events { worker_connections 64; }
http {
    access_log off;
    client_body_temp_path %[1]s/body;
    proxy_temp_path %[1]s/proxy;
    fastcgi_temp_path %[1]s/fastcgi;
    uwsgi_temp_path %[1]s/uwsgi;
    scgi_temp_path %[1]s/scgi;
    include %[1]s/site.conf;
}
`, dir)
	if err := os.WriteFile(filepath.Join(dir, "nginx.conf"), []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(nginx, "-e", "stderr", "-p", dir, "-c", filepath.Join(dir, "nginx.conf"))
	stderr := &testenv.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = stderr, stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() { cmd.Wait(); close(exited) }()
	t.Cleanup(func() {
		cmd.Process.Signal(syscall.SIGQUIT) // graceful stop
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	addr := fmt.Sprintf("127.0.0.1:%d", httpsPort)
	for deadline := time.Now().Add(20 * time.Second); ; {
		select {
		case <-exited:
			t.Fatalf("nginx exited: %s\nsite:\n%s", stderr.String(), site)
		default:
		}
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("nginx does not listen on %s: %s", addr, stderr.String())
		}
		time.Sleep(20 * time.Millisecond) // polling for the listener, not a timing assumption
	}
}

// writeTestCert writes a self-signed certificate for 127.0.0.1 (cert.pem, key.pem) to dir
// and returns the certificate's PEM.
func writeTestCert(t *testing.T, dir string) []byte {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1),
		Subject:      pkix.Name{CommonName: "agentdesk test"},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
		DNSNames:     []string{"agentdesk.example.com"},
		KeyUsage:     x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:         true, BasicConstraintsValid: true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	certPEM := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})
	if err := os.WriteFile(filepath.Join(dir, "cert.pem"), certPEM, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "key.pem"), pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), 0o600); err != nil {
		t.Fatal(err)
	}
	return certPEM
}

// freePort is a loopback TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}
