package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestCredentialChanges: every change that can end a credential moves the count the
// event hub reads (CredentialChanges, migrations 00024 and 00037), and nothing else
// does: new rows, last-seen and last-used times, names shown, events (which change
// projects.event_seq).
func TestCredentialChanges(t *testing.T) { pgtest.Engines(t, testCredentialChanges) }

// credentialHolders are a project's rows that credentials depend on, one of each.
type credentialHolders struct {
	project                       string
	agentID, userID, tokenID      int64
	sessionID, tokenSessionID     int64
	sessionHash, tokenSessionHash []byte
}

func testCredentialChanges(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	later := at.Add(time.Hour)
	count := func() int64 {
		t.Helper()
		n, err := s.CredentialChanges(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	write := func(fn func(tx *Tx) error) {
		t.Helper()
		if err := s.Write(ctx, Author{}, fn); err != nil {
			t.Fatal(err)
		}
	}
	hash := func(v string) []byte { h := sha256.Sum256([]byte(v)); return h[:] }
	// holders inserts a project with an agent, a member with a session, and a token with
	// a browser session.
	holders := func(i int) credentialHolders {
		t.Helper()
		h := credentialHolders{project: fmt.Sprintf("p%d", i),
			sessionHash: hash(fmt.Sprint("session", i)), tokenSessionHash: hash(fmt.Sprint("token session", i))}
		write(func(tx *Tx) (err error) {
			if err := tx.InsertProject(ctx, &model.Project{ID: h.project, Name: h.project, Namespace: h.project, TokenSecret: "s", CreatedAt: at}); err != nil {
				return err
			}
			agent := &model.Agent{ProjectID: h.project, Name: "bot", CreatedAt: at}
			if err := tx.InsertAgent(ctx, agent); err != nil {
				return err
			}
			if h.userID, err = tx.InsertUser(ctx, fmt.Sprint("user", i), nil, at); err != nil {
				return err
			}
			if err := tx.InsertMember(ctx, h.project, h.userID, "member", at); err != nil {
				return err
			}
			if err := tx.InsertSession(ctx, h.sessionHash, h.userID, "csrf", "Firefox", "127.0.0.1", "", at); err != nil {
				return err
			}
			tok := &model.Token{ProjectID: h.project, Name: "ui", Type: "platform", Scopes: []string{"task:read"}, CreatedAt: at}
			if err := tx.InsertToken(ctx, tok, hash(fmt.Sprint("token", i))); err != nil {
				return err
			}
			h.agentID, h.tokenID = agent.ID, tok.ID
			return tx.InsertTokenSession(ctx, h.tokenSessionHash, tok.ID, "csrf", "Firefox", "127.0.0.1", at)
		})
		sess, err := s.Read().SessionByHash(ctx, h.sessionHash)
		if err != nil {
			t.Fatal(err)
		}
		tokSess, err := s.Read().TokenSessionByHash(ctx, h.tokenSessionHash)
		if err != nil {
			t.Fatal(err)
		}
		h.sessionID, h.tokenSessionID = sess.ID, tokSess.ID
		return h
	}
	cases := []struct {
		name    string
		change  func(tx *Tx, h credentialHolders) error
		counted bool
	}{
		// Changes that end a credential.
		{"agent deleted", func(tx *Tx, h credentialHolders) error { return tx.DeleteAgent(ctx, h.project, h.agentID) }, true},
		{"agent renamed", func(tx *Tx, h credentialHolders) error {
			return tx.execOne(ctx, `UPDATE agents SET name = 'other' WHERE id = $1`, h.agentID)
		}, true},
		{"project secret rotated", func(tx *Tx, h credentialHolders) error { return tx.SetProjectSecret(ctx, h.project, "new") }, true},
		{"project deleted", func(tx *Tx, h credentialHolders) error {
			return tx.execOne(ctx, `DELETE FROM projects WHERE id = $1`, h.project)
		}, true},
		{"member removed", func(tx *Tx, h credentialHolders) error { return tx.DeleteMember(ctx, h.project, h.userID) }, true},
		{"member's role changed", func(tx *Tx, h credentialHolders) error {
			return tx.UpdateMemberRole(ctx, h.project, h.userID, "viewer", later)
		}, true},
		{"user deleted", func(tx *Tx, h credentialHolders) error {
			return tx.execOne(ctx, `DELETE FROM users WHERE id = $1`, h.userID)
		}, true},
		{"session signed out", func(tx *Tx, h credentialHolders) error { return tx.EndSession(ctx, h.sessionID, later) }, true},
		{"user signed out everywhere", func(tx *Tx, h credentialHolders) error { return tx.EndUserSessions(ctx, h.userID, later) }, true},
		{"sessions pruned", func(tx *Tx, h credentialHolders) error {
			_, err := tx.PruneSessions(ctx, later, later, at.Add(-time.Hour)) // idle since before later
			return err
		}, true},
		{"token session signed out", func(tx *Tx, h credentialHolders) error { return tx.EndTokenSession(ctx, h.tokenSessionID, later) }, true},
		{"token revoked", func(tx *Tx, h credentialHolders) error { return tx.RevokeToken(ctx, h.project, h.tokenID, later) }, true},

		// Changes that end none.
		{"nothing", func(*Tx, credentialHolders) error { return nil }, false},
		{"event appended", func(tx *Tx, h credentialHolders) error {
			return tx.AppendEvent(ctx, h.project, "task.created", map[string]int{"id": 1}, later)
		}, false},
		{"agent's profile changed", func(tx *Tx, h credentialHolders) error {
			return tx.UpdateAgentProfile(ctx, &model.Agent{ID: h.agentID, ProjectID: h.project, DisplayName: "Bot", Description: "d"})
		}, false},
		{"agent seen", func(tx *Tx, h credentialHolders) error {
			return tx.TouchAgents(ctx, map[int64]time.Time{h.agentID: later})
		}, false},
		{"member's name set", func(tx *Tx, h credentialHolders) error { return tx.SetMemberName(ctx, h.project, h.userID, "Dana") }, false},
		{"session used", func(tx *Tx, h credentialHolders) error { return tx.TouchSession(ctx, h.sessionID, later) }, false},
		{"token session used", func(tx *Tx, h credentialHolders) error { return tx.TouchTokenSession(ctx, h.tokenSessionID, later) }, false},
		{"token used", func(tx *Tx, h credentialHolders) error {
			return tx.TouchTokens(ctx, map[int64]time.Time{h.tokenID: later})
		}, false},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			before := count()
			h := holders(i)
			if n := count(); n != before {
				t.Fatalf("inserting an agent, a member, a session, a token and its session moved the count from %d to %d", before, n)
			}
			start := time.Now()
			write(func(tx *Tx) error { return c.change(tx, h) })
			took := time.Since(start)
			if moved := count() != before; moved != c.counted {
				t.Errorf("count moved: %v, want %v", moved, c.counted)
			}
			// Other processes' and servers' token caches notice the change within
			// foreignLookEvery: its answer waits that long (credcache.go).
			if c.counted && took < foreignLookEvery {
				t.Errorf("the write was answered after %v, before foreignLookEvery (%v)", took, foreignLookEvery)
			}
		})
	}
}
