package mail_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/mail"
	"github.com/agentdesk/agentdesk/backend/mail/mailtest"
)

// TestParseConfig: --smtp-url and --smtp-from are checked together, with errors that
// say what to write and never show the password.
func TestParseConfig(t *testing.T) {
	const secret = "hunter2"
	for _, c := range []struct{ url, from, want string }{
		{"smtp://u:" + secret + "@mail.example.com", "", "--smtp-url needs --smtp-from"},
		{"", "a@example.com", "--smtp-from needs --smtp-url"},
		{"http://u:" + secret + "@mail.example.com", "a@example.com", "must start with smtp:// "},
		{"smtp://u:" + secret + "@:25", "a@example.com", "names no host"},
		{"smtp://u:" + secret + "@mail.example.com/x", "a@example.com", "takes no path"},
		{"smtp://u:" + secret + "%zz@mail.example.com", "a@example.com", "is not a URL"},
		{"smtp://u:" + secret + "@mail.example.com", "not an address", "--smtp-from must be an email address"},
	} {
		_, err := mail.ParseConfig(c.url, c.from)
		if err == nil || !strings.Contains(err.Error(), c.want) || strings.Contains(err.Error(), secret) {
			t.Errorf("ParseConfig(%q, %q) = %v; want an error with %q, without the password", c.url, c.from, err, c.want)
		}
	}
	for _, c := range []struct{ url, addr, user, pass string }{
		{"smtp://u:p%40ss@mail.example.com", "smtp://u@mail.example.com:587", "u", "p@ss"},
		{"smtps://mail.example.com", "smtps://mail.example.com:465", "", ""},
		{"smtp://127.0.0.1:2525", "smtp://127.0.0.1:2525", "", ""},
	} {
		cfg, err := mail.ParseConfig(c.url, "Agentdesk <desk@example.com>")
		if err != nil || cfg.String() != c.addr || cfg.Username != c.user || cfg.Password != c.pass || cfg.From.Address != "desk@example.com" {
			t.Errorf("ParseConfig(%q) = %+v, %v", c.url, cfg, err)
		}
	}
	if cfg, err := mail.ParseConfig("", ""); cfg != nil || err != nil {
		t.Errorf("no flags: %v, %v; want no mail", cfg, err)
	}
}

// TestSend: a message reaches a real SMTP server signed in with the URL's user, its
// UTF-8 subject and text intact; a wrong password is refused, and the error says so.
func TestSend(t *testing.T) {
	smtpd := mailtest.Start(t)
	cfg, err := mail.ParseConfig(smtpd.URL(), "desk@example.com")
	if err != nil {
		t.Fatal(err)
	}
	msg := mail.Message{To: "zoë@example.com", Subject: "Frage: Löschen?", Text: "Soll ich löschen?\nhttps://desk.example.com/mail/" + strings.Repeat("x", 90) + "\n"}
	if err := cfg.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
	got := smtpd.Next(t, 10*time.Second)
	if got.To != msg.To || got.Subject != msg.Subject || got.Text != msg.Text || got.Header.Get("Auto-Submitted") != "auto-generated" {
		t.Fatalf("got %+v", got)
	}
	if links := got.Links(); len(links) != 1 || !strings.HasSuffix(links[0], strings.Repeat("x", 90)) {
		t.Fatalf("a long link must survive quoted-printable: %v", links)
	}
	cfg.Password = "wrong"
	if err := cfg.Send(context.Background(), msg); err == nil || !strings.Contains(err.Error(), "sign in as "+mailtest.User) {
		t.Fatalf("wrong password: %v", err)
	}
}
