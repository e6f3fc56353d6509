package store

import (
	"context"
	"slices"
	"sync"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// Every request authenticates, most with a token looked up by its hash. On SQLite the
// store keeps the tokens it has looked up, so that a request costs no query (make bench:
// creates and messages +14-18%, docs/performance.md). What empties it:
//
//   - A write of this store that changes or deletes a token. Triggers on tokens count
//     every such change in credential_changes (migration 00024), whatever statement made
//     it: a revocation, a rotation, a project's deletion cascading. The writer reads the
//     count once a batch and, when it moved, empties the cache after the commit and
//     before any write of the batch is acknowledged. No code path has to remember to do
//     it. (A new token needs nothing: only tokens that exist are cached.) The count
//     also moves on the changes that end an agent's or a session's credential
//     (migration 00037, for the event hub: CredentialChanges); those empty the cache
//     too, and delay the answer to their write by foreignLookEvery, which is harmless:
//     they are rare (an agent deleted, a secret rotated, a member removed, a sign-out).
//   - Another process's commit (the command line beside a running server, a second store
//     on the file): the data_version watch (sqlite.Watch) is looked at before a cached
//     token is used, unless a look began less than foreignLookEvery ago; under load the
//     writer's own commits look that often. So a server notices another process's commit
//     within foreignLookEvery; and since every writer acknowledges a batch that changed
//     a token no sooner than foreignLookEvery after its commit (Store.Write), a revocation
//     counts in every process by the time its caller hears it succeeded.
//
// On PostgreSQL, where several servers share the database, the same rule holds with the
// count read from the database (migration 00026 counts there too):
//
//   - Every batch's COMMIT round trip reads the count (commitPostgres); a server whose
//     cached tokens may be older than foreignLookEvery reads it before it uses one
//     (Store.TokenByHash). When the count moved, the cache is emptied. So a server uses
//     a cached token only if a read of the count that began less than foreignLookEvery
//     ago found no change since the token was cached.
//   - A write whose count moved between its BEGIN and its COMMIT (both read in its own
//     transaction) is acknowledged foreignLookEvery after its commit. So once a
//     revocation's caller hears it succeeded, any read of the count that began less
//     than foreignLookEvery ago began after the revocation was committed, and saw it:
//     no server uses the revoked token from its cache.
//
// The times compared are each server's own (monotonic) durations: no clock is shared.

// foreignLookEvery bounds how late the token cache may notice another process's commit,
// and so how much longer a write that changes a token takes to be acknowledged. At 1 ms
// the writer's own looks (one a commit) came too seldom under load and requests looked
// themselves: creates +3% against +14% at 10 ms (docs/performance.md).
const foreignLookEvery = 10 * time.Millisecond

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
	if err := s.eng.checkTokens(ctx); err != nil {
		return s.Read().TokenByHash(ctx, hash)
	}
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

// credentialChanges reads the count of credential changes, inside the writer's batch.
func credentialChanges(ctx context.Context, r Reader) (int64, error) {
	var n int64
	err := r.queryRow(ctx, countCredentialChanges).Scan(&n)
	return n, err
}

// CredentialChanges reads the count of the changes that can end a credential: a
// token's, an agent's, a project's secret, a membership's, a session's (migrations
// 00024 and 00037; on PostgreSQL, 00026 and 00037). While it stays the same, every
// credential that authenticated still does, but for expiry (which needs no change). The
// event hub reads it to check open streams' credentials only when one may have ended.
// A count the store has not taken yet (another process's or server's change, which the
// token cache notices only within foreignLookEvery) empties the token cache, so that
// a check right after this read sees the change. The count stays the writer's to take
// (sawCredentialChanges): whether a write's answer waits depends on it.
func (s *Store) CredentialChanges(ctx context.Context) (int64, error) {
	n, err := credentialChanges(ctx, s.Read())
	if err != nil {
		return 0, err
	}
	c := &s.credentials
	c.mu.Lock()
	defer c.mu.Unlock()
	if n != c.n {
		s.tokens.clear()
	}
	return n, nil
}

// credentialCount is the store's last read of the count of token changes (by the
// writer, and on PostgreSQL by requests too), and when that read began (PostgreSQL's
// requests look at it: recent).
type credentialCount struct {
	mu       sync.Mutex
	n        int64
	lookedAt time.Time
}

// recent says whether the last read began less than foreignLookEvery ago.
func (c *credentialCount) recent() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return !c.lookedAt.IsZero() && time.Since(c.lookedAt) < foreignLookEvery
}

// sawCredentialChanges takes a read of the count of token changes that began at start,
// and empties the token cache if the count moved (then it says so). A read that began
// before the last one taken only empties the cache, which is always safe.
func (s *Store) sawCredentialChanges(n int64, start time.Time) (moved bool) {
	c := &s.credentials
	c.mu.Lock()
	defer c.mu.Unlock()
	moved = n != c.n
	if moved {
		s.tokens.clear()
	}
	if start.After(c.lookedAt) {
		c.n, c.lookedAt = n, start
	}
	return moved
}

// lookAtCredentials reads the count of token changes on the read pool (PostgreSQL).
func (s *Store) lookAtCredentials(ctx context.Context) error {
	start := time.Now()
	var n int64
	if err := s.reader.QueryRowContext(ctx, countCredentialChanges).Scan(&n); err != nil {
		return err
	}
	s.sawCredentialChanges(n, start)
	return nil
}

// countCredentialChanges reads the count of credential changes (migrations 00024 and
// 00037; on PostgreSQL, 00026 and 00037).
const countCredentialChanges = `SELECT COALESCE((SELECT n FROM credential_changes WHERE id = 1), 0)`
