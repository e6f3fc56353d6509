package mail

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"mime"
	"mime/quotedprintable"
	"net"
	"net/mail"
	"net/smtp"
	"net/url"
	"strings"
	"time"
)

// Config is where mail goes out: an SMTP server and the sender's address.
type Config struct {
	Host string
	Port string
	// TLS is smtps: TLS from the first byte (port 465). Otherwise (smtp) the connection
	// is upgraded with STARTTLS whenever the server offers it.
	TLS                bool
	Username, Password string
	From               *mail.Address
}

// Timeout bounds one send, from connecting to the server's last answer.
const Timeout = 30 * time.Second

// ParseConfig reads --smtp-url (smtp[s]://user:pass@host:port) and --smtp-from (an
// address, with or without a name). Its errors never show the password.
func ParseConfig(rawURL, from string) (*Config, error) {
	if rawURL == "" && from == "" {
		return nil, nil
	}
	if rawURL == "" {
		return nil, errors.New("--smtp-from needs --smtp-url smtp[s]://user:pass@host:port: the server that sends the mail")
	}
	if from == "" {
		return nil, errors.New("--smtp-url needs --smtp-from: the address the mail comes from, such as agentdesk@example.com")
	}
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, fmt.Errorf("--smtp-url must be smtp[s]://user:pass@host:port, and %q is not a URL (special characters in the password must be %%-escaped)", Redact(rawURL))
	}
	c := &Config{Host: u.Hostname(), Port: u.Port()}
	switch u.Scheme {
	case "smtp":
		if c.Port == "" {
			c.Port = "587"
		}
	case "smtps":
		c.TLS = true
		if c.Port == "" {
			c.Port = "465"
		}
	default:
		return nil, fmt.Errorf("--smtp-url must start with smtp:// (STARTTLS when offered) or smtps:// (TLS), not %q", Redact(rawURL))
	}
	if c.Host == "" {
		return nil, fmt.Errorf("--smtp-url names no host: %q (smtp[s]://user:pass@host:port)", Redact(rawURL))
	}
	if (u.Path != "" && u.Path != "/") || u.RawQuery != "" {
		return nil, fmt.Errorf("--smtp-url takes no path or query: %q (smtp[s]://user:pass@host:port)", Redact(rawURL))
	}
	if u.User != nil {
		c.Username = u.User.Username()
		c.Password, _ = u.User.Password()
	}
	if c.From, err = mail.ParseAddress(from); err != nil {
		return nil, fmt.Errorf("--smtp-from must be an email address such as agentdesk@example.com or \"Agentdesk <agentdesk@example.com>\", not %q", from)
	}
	return c, nil
}

// Redact is an SMTP URL without its password, for errors and logs.
func Redact(rawURL string) string {
	u, err := url.Parse(rawURL)
	if err != nil {
		// Not a URL: hide whatever stands between "://" and the last '@'.
		scheme, rest, ok := strings.Cut(rawURL, "://")
		if at := strings.LastIndex(rest, "@"); ok && at >= 0 {
			return scheme + "://xxxxx" + rest[at:]
		}
		return rawURL
	}
	return u.Redacted()
}

// String describes where mail goes, without the password.
func (c *Config) String() string {
	scheme := "smtp"
	if c.TLS {
		scheme = "smtps"
	}
	u := url.URL{Scheme: scheme, Host: net.JoinHostPort(c.Host, c.Port)}
	if c.Username != "" {
		u.User = url.User(c.Username)
	}
	return u.String()
}

// Message is one plain-text email to one person.
type Message struct {
	To      string
	Subject string
	Text    string
}

// Send delivers msg through the server: an error says what the server refused, or that
// it could not be reached.
func (c *Config) Send(ctx context.Context, msg Message) error {
	ctx, cancel := context.WithTimeout(ctx, Timeout)
	defer cancel()
	addr := net.JoinHostPort(c.Host, c.Port)
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return err
	}
	deadline, _ := ctx.Deadline()
	_ = conn.SetDeadline(deadline)
	stop := context.AfterFunc(ctx, func() { conn.Close() }) // a cancelled send ends at once
	defer stop()
	tlsConfig := &tls.Config{ServerName: c.Host, MinVersion: tls.VersionTLS12}
	if c.TLS {
		conn = tls.Client(conn, tlsConfig)
	}
	client, err := smtp.NewClient(conn, c.Host)
	if err != nil {
		conn.Close()
		return err
	}
	defer client.Close()
	if ok, _ := client.Extension("STARTTLS"); ok && !c.TLS {
		if err := client.StartTLS(tlsConfig); err != nil {
			return fmt.Errorf("STARTTLS: %w", err)
		}
	}
	if c.Username != "" {
		// PlainAuth sends the password only over TLS, or to a server on this machine.
		if err := client.Auth(smtp.PlainAuth("", c.Username, c.Password, c.Host)); err != nil {
			return fmt.Errorf("sign in as %s: %w", c.Username, err)
		}
	}
	if err := client.Mail(c.From.Address); err != nil {
		return fmt.Errorf("MAIL FROM %s: %w", c.From.Address, err)
	}
	if err := client.Rcpt(msg.To); err != nil {
		return fmt.Errorf("RCPT TO %s: %w", msg.To, err)
	}
	w, err := client.Data()
	if err != nil {
		return err
	}
	if _, err := w.Write(c.render(msg)); err != nil {
		return err
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("the server refused the message: %w", err)
	}
	return client.Quit()
}

// render is the message as sent: headers and a quoted-printable UTF-8 body.
func (c *Config) render(msg Message) []byte {
	var b bytes.Buffer
	id := make([]byte, 16)
	_, _ = rand.Read(id)
	header := func(k, v string) { b.WriteString(k + ": " + v + "\r\n") }
	header("From", c.From.String())
	header("To", msg.To)
	header("Subject", mime.QEncoding.Encode("utf-8", msg.Subject))
	header("Date", time.Now().Format(time.RFC1123Z))
	header("Message-ID", "<"+hex.EncodeToString(id)+"@"+c.fromDomain()+">")
	header("MIME-Version", "1.0")
	header("Content-Type", "text/plain; charset=utf-8")
	header("Content-Transfer-Encoding", "quoted-printable")
	header("Auto-Submitted", "auto-generated") // no vacation replies
	b.WriteString("\r\n")
	qp := quotedprintable.NewWriter(&b)
	_, _ = qp.Write([]byte(strings.ReplaceAll(msg.Text, "\n", "\r\n")))
	_ = qp.Close()
	return b.Bytes()
}

func (c *Config) fromDomain() string {
	if _, domain, ok := strings.Cut(c.From.Address, "@"); ok {
		return domain
	}
	return c.Host
}
