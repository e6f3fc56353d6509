// Package mailtest is a real SMTP server for tests (github.com/emersion/go-smtp), on
// loopback: it asks for a user and password, keeps the messages it is given, decoded,
// and can be told to refuse them. Only tests import it.
package mailtest

import (
	"errors"
	"io"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/emersion/go-sasl"
	"github.com/emersion/go-smtp"
)

// User and Password are what the server accepts.
const (
	User     = "agentdesk"
	Password = "s3cret p@ss"
)

// Message is a message the server took, decoded.
type Message struct {
	From, To string // the envelope's
	Subject  string
	Header   mail.Header
	Text     string // the body, quoted-printable decoded
}

// Server is a running SMTP server.
type Server struct {
	Addr     string
	messages chan Message
	mu       sync.Mutex
	refuse   bool
	delay    time.Duration
	attempts int
}

// Start starts a server on loopback; it stops when the test ends.
func Start(t testing.TB) *Server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{Addr: ln.Addr().String(), messages: make(chan Message, 100)}
	srv := smtp.NewServer(smtp.BackendFunc(func(*smtp.Conn) (smtp.Session, error) { return &session{s: s}, nil }))
	srv.Domain = "localhost"
	srv.AllowInsecureAuth = true // loopback, no TLS: the client sends PLAIN to a local server only
	srv.ReadTimeout, srv.WriteTimeout = 10*time.Second, 10*time.Second
	go srv.Serve(ln) //nolint:errcheck // ends with Close
	t.Cleanup(func() { srv.Close() })
	return s
}

// URL is the --smtp-url of the server, with the user and password it accepts.
func (s *Server) URL() string {
	return "smtp://" + User + ":" + strings.ReplaceAll(Password, " ", "%20") + "@" + s.Addr
}

// Refuse makes the server refuse (451) every message from now on, or take them again.
func (s *Server) Refuse(refuse bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.refuse = refuse
}

// Slow makes the server wait d before it takes each message from now on: a send stays
// in flight that long.
func (s *Server) Slow(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delay = d
}

// Attempts is how many messages were offered (refused or taken).
func (s *Server) Attempts() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.attempts
}

// Next waits for the next message taken, failing the test after wait.
func (s *Server) Next(t testing.TB, wait time.Duration) Message {
	t.Helper()
	select {
	case m := <-s.messages:
		return m
	case <-time.After(wait):
		t.Fatalf("no email within %s", wait)
		return Message{}
	}
}

// None checks that no message is taken within wait.
func (s *Server) None(t testing.TB, wait time.Duration) {
	t.Helper()
	select {
	case m := <-s.messages:
		t.Fatalf("unexpected email to %s: %q", m.To, m.Subject)
	case <-time.After(wait):
	}
}

var linkPattern = regexp.MustCompile(`https?://[^\s]+`)

// Links are the URLs in the message's text, in order.
func (m Message) Links() []string { return linkPattern.FindAllString(m.Text, -1) }

type session struct {
	s        *Server
	authed   bool
	from, to string
}

func (x *session) AuthMechanisms() []string { return []string{sasl.Plain} }

func (x *session) Auth(string) (sasl.Server, error) {
	return sasl.NewPlainServer(func(identity, username, password string) error {
		if username != User || password != Password {
			return errors.New("invalid username or password")
		}
		x.authed = true
		return nil
	}), nil
}

func (x *session) Mail(from string, _ *smtp.MailOptions) error {
	if !x.authed {
		return smtp.ErrAuthRequired
	}
	x.s.mu.Lock()
	defer x.s.mu.Unlock()
	x.s.attempts++
	if x.s.refuse {
		return &smtp.SMTPError{Code: 451, EnhancedCode: smtp.EnhancedCode{4, 3, 0}, Message: "try again later"}
	}
	x.from = from
	return nil
}

func (x *session) Rcpt(to string, _ *smtp.RcptOptions) error {
	x.to = to
	return nil
}

func (x *session) Data(r io.Reader) error {
	x.s.mu.Lock()
	delay := x.s.delay
	x.s.mu.Unlock()
	time.Sleep(delay)
	msg, err := mail.ReadMessage(r)
	if err != nil {
		return err
	}
	body := msg.Body
	if strings.EqualFold(msg.Header.Get("Content-Transfer-Encoding"), "quoted-printable") {
		body = quotedprintable.NewReader(body)
	}
	text, err := io.ReadAll(body)
	if err != nil {
		return err
	}
	subject, _ := new(mime.WordDecoder).DecodeHeader(msg.Header.Get("Subject"))
	x.s.messages <- Message{From: x.from, To: x.to, Subject: subject, Header: msg.Header,
		Text: strings.ReplaceAll(string(text), "\r\n", "\n")}
	return nil
}

func (x *session) Reset()        { x.from, x.to = "", "" }
func (x *session) Logout() error { return nil }
