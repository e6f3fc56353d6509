package store

import (
	"context"
	"crypto/sha256"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// TestPostgresTokenCacheAcrossServers: two stores on one PostgreSQL database stand for two
// servers. The second keeps looking tokens up (from its cache: no query) while it writes,
// as a server under load does; the first revokes them one by one. Once the first's
// revocation returns, the second's very next lookup must see the token revoked, though
// it had it cached.
func TestPostgresTokenCacheAcrossServers(t *testing.T) {
	ctx := context.Background()
	stores := twoPostgresStores(t)
	a, b := stores[0], stores[1]
	const tokens = 20
	hashes := make([][]byte, tokens)
	ids := make([]int64, tokens)
	if err := a.Write(ctx, Author{}, func(tx *Tx) error {
		if err := tx.InsertProject(ctx, &model.Project{ID: "p", Name: "p", Namespace: "default", TokenSecret: "s", CreatedAt: time.Now()}); err != nil {
			return err
		}
		for i := range tokens {
			h := sha256.Sum256(fmt.Appendf(nil, "token %d", i))
			tok := &model.Token{ProjectID: "p", Name: fmt.Sprint(i), Type: "platform", Scopes: []string{"task:read"}, CreatedAt: time.Now()}
			if err := tx.InsertToken(ctx, tok, h[:]); err != nil {
				return err
			}
			hashes[i], ids[i] = h[:], tok.ID
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}

	// The second server is busy: its batches' commits read the count of token changes.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			if err := b.Write(ctx, Author{Project: "p"}, func(tx *Tx) error {
				return tx.AppendEvent(ctx, "p", "test.busy", map[string]int{}, time.Now())
			}); err != nil {
				t.Error(err)
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	var cached atomic.Int64 // lookups answered with no query
	lookup := func(i int) *model.Token {
		before := b.ReadQueries()
		tok, err := b.TokenByHash(ctx, hashes[i])
		if err != nil {
			t.Fatal(err)
		}
		if b.ReadQueries() == before {
			cached.Add(1)
		}
		return tok
	}
	for i := range tokens {
		for range 50 {
			if tok := lookup(i); tok.RevokedAt != nil {
				t.Fatalf("token %d revoked before its revocation", i)
			}
		}
		if err := a.Write(ctx, Author{}, func(tx *Tx) error { return tx.RevokeToken(ctx, "p", ids[i], time.Now()) }); err != nil {
			t.Fatal(err)
		}
		if tok := lookup(i); tok.RevokedAt == nil {
			t.Fatalf("token %d: the other server's revocation returned, and this one still has it unrevoked", i)
		}
	}
	// The cache was used: most lookups ran no query.
	if n := cached.Load(); n < tokens*50/2 {
		t.Errorf("%d of %d lookups came from the cache; want most", n, tokens*51)
	}
}
