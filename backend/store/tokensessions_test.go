package store

import (
	"context"
	"crypto/sha256"
	"errors"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestTokenSessions: a token session is found by the hash of its value with its token's
// hash, is touched and ended, goes when its token is deleted, and PruneSessions removes
// the ended, idle and old ones.
func TestTokenSessions(t *testing.T) { pgtest.Engines(t, testTokenSessions) }

func testTokenSessions(t *testing.T, engine string) {
	s := openTestOn(t, engine)
	ctx := context.Background()
	at := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	tokenHash := sha256.Sum256([]byte("adk_token"))
	hash := func(v string) []byte { h := sha256.Sum256([]byte(v)); return h[:] }
	tok := &model.Token{ProjectID: "p", Name: "ui", Type: "platform", Scopes: []string{"task:read"}, CreatedAt: at}
	write := func(fn func(tx *Tx) error) {
		t.Helper()
		if err := s.Write(ctx, Author{}, fn); err != nil {
			t.Fatal(err)
		}
	}
	write(func(tx *Tx) error {
		if err := tx.InsertToken(ctx, tok, tokenHash[:]); err != nil {
			return err
		}
		for _, v := range []string{"live", "ended", "idle"} {
			if err := tx.InsertTokenSession(ctx, hash(v), tok.ID, "csrf-"+v, "Firefox", "127.0.0.1", at); err != nil {
				return err
			}
		}
		return tx.InsertTokenSession(ctx, hash("old"), tok.ID, "csrf-old", "Firefox", "127.0.0.1", at.Add(-time.Minute))
	})

	got, err := s.Read().TokenSessionByHash(ctx, hash("live"))
	if err != nil {
		t.Fatal(err)
	}
	if got.TokenID != tok.ID || string(got.TokenHash) != string(tokenHash[:]) || got.CSRFToken != "csrf-live" ||
		!got.CreatedAt.Equal(at) || !got.LastSeenAt.Equal(at) || got.EndedAt != nil || got.UserAgent != "Firefox" || got.Address != "127.0.0.1" {
		t.Fatalf("TokenSessionByHash = %+v", got)
	}
	if _, err := s.Read().TokenSessionByHash(ctx, hash("none")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("an unknown hash: %v, want ErrNotFound", err)
	}

	later := at.Add(time.Hour)
	ids := map[string]int64{}
	for _, v := range []string{"live", "ended", "idle", "old"} {
		x, err := s.Read().TokenSessionByHash(ctx, hash(v))
		if err != nil {
			t.Fatal(err)
		}
		ids[v] = x.ID
	}
	write(func(tx *Tx) error {
		if err := tx.TouchTokenSession(ctx, ids["live"], later); err != nil {
			return err
		}
		if err := tx.TouchTokenSession(ctx, ids["old"], later); err != nil {
			return err
		}
		return tx.EndTokenSession(ctx, ids["ended"], later)
	})
	if x, _ := s.Read().TokenSessionByHash(ctx, hash("live")); !x.LastSeenAt.Equal(later) {
		t.Errorf("touched at %s: last seen %s", later, x.LastSeenAt)
	}
	if x, _ := s.Read().TokenSessionByHash(ctx, hash("ended")); x.EndedAt == nil || !x.EndedAt.Equal(later) {
		t.Errorf("ended at %s: %v", later, x.EndedAt)
	}

	// Idle: not seen since at; old: begun before at (though seen later). Only "live" stays.
	var n int64
	write(func(tx *Tx) (err error) {
		n, err = tx.PruneSessions(ctx, later, at, at.Add(-time.Second))
		return err
	})
	if n != 3 {
		t.Errorf("PruneSessions removed %d, want 3 (ended, idle, old)", n)
	}
	for v, want := range map[string]error{"live": nil, "ended": ErrNotFound, "idle": ErrNotFound, "old": ErrNotFound} {
		if _, err := s.Read().TokenSessionByHash(ctx, hash(v)); !errors.Is(err, want) {
			t.Errorf("session %q after pruning: %v, want %v", v, err, want)
		}
	}

	// A token deleted takes its sessions along.
	write(func(tx *Tx) error { _, err := tx.exec(ctx, `DELETE FROM tokens WHERE id = $1`, tok.ID); return err })
	if _, err := s.Read().TokenSessionByHash(ctx, hash("live")); !errors.Is(err, ErrNotFound) {
		t.Errorf("the session of a deleted token: %v, want ErrNotFound", err)
	}
}
