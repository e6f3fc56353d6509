package store

import (
	"context"
	"slices"
	"sync"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Every request authenticates, most with a token looked up by its hash. On SQLite the
// store keeps the tokens it has looked up, so that a request costs no token query (make
// bench: creates and messages +14-18%, docs/performance.md). What empties it:
//
//   - A write of this store that changes or deletes a token. Triggers on tokens count
//     every such change in credential_changes (migration 00024), whatever statement made
//     it: a revocation, a rotation, a project's deletion cascading. The writer reads the
//     count in every batch and, when it moved, empties the cache after the commit and
//     before any write of the batch is acknowledged (sawCredentialChanges): no code path
//     has to remember to. (A new token needs nothing: only tokens that exist are cached.)
//   - Another process's commit (the command line beside a running server): every lookup
//     first asks the data_version watch (foreign.go), which empties the cache when
//     another connection committed since it last looked. So a revocation counts in every
//     process by the time its caller hears it succeeded, and no writer waits for it.
//
// PostgreSQL keeps no cache: several servers share the database, and knowing that a
// cached token is still good would take a query per request anyway.

// maxCachedTokens bounds the cache; past it, it starts over. Only tokens that exist are
// kept, so guessing hashes cannot fill it.
const maxCachedTokens = 10_000

// tokenCache holds tokens by hash. gen counts the times it was emptied: a lookup that
// began before an emptying does not store what it read, which may be older than it.
type tokenCache struct {
	mu     sync.Mutex
	gen    uint64
	byHash map[string]model.Token
}

func (c *tokenCache) get(hash []byte) (tok model.Token, gen uint64, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	tok, ok = c.byHash[string(hash)]
	return tok, c.gen, ok
}

func (c *tokenCache) put(gen uint64, hash []byte, tok model.Token) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if gen != c.gen {
		return
	}
	if c.byHash == nil || len(c.byHash) >= maxCachedTokens {
		c.byHash = map[string]model.Token{}
	}
	c.byHash[string(hash)] = tok
}

func (c *tokenCache) clear() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	c.byHash = nil
}

// TokenByHash finds a token by the SHA-256 of its value.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*model.Token, error) {
	if s.pg {
		return s.Read().TokenByHash(ctx, hash)
	}
	s.watch.check(ctx) // another process's commits (foreign.go)
	tok, gen, ok := s.tokens.get(hash)
	if ok {
		return copyToken(tok), nil
	}
	found, err := s.Read().TokenByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	s.tokens.put(gen, hash, *copyToken(*found))
	return found, nil
}

// copyToken is a copy of tok that shares nothing with it, so that what a caller does
// with a token never changes the cache's.
func copyToken(tok model.Token) *model.Token {
	tok.Scopes = slices.Clone(tok.Scopes)
	if tok.CreatedBy != nil {
		maker := *tok.CreatedBy
		tok.CreatedBy = &maker
	}
	return &tok
}

// credentialChanges reads the count of token changes, inside the writer's batch.
func credentialChanges(ctx context.Context, r Reader) (int64, error) {
	var n int64
	err := r.queryRow(ctx, countCredentialChanges).Scan(&n)
	return n, err
}

// sawCredentialChanges takes the writer's read of the count of token changes, made in a
// batch that has just committed, and empties the token cache if the count moved.
func (s *Store) sawCredentialChanges(n int64) {
	if n != s.credentialChanges {
		s.tokens.clear()
	}
	s.credentialChanges = n
}

// countCredentialChanges reads the count of token changes (migration 00024).
const countCredentialChanges = `SELECT COALESCE((SELECT n FROM credential_changes WHERE id = 1), 0)`
