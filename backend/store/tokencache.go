package store

import (
	"context"
	"sync"

	"github.com/agentdesk/agentdesk/backend/model"
)

// tokenCache remembers tokens found by hash, so that a request's authentication costs
// no query. Any committed write that changes a token (revoke, rotate) empties it before
// the write is acknowledged, so a revoked token is refused from then on.
type tokenCache struct {
	mu  sync.Mutex
	gen uint64 // bumped by every invalidation
	m   map[string]*model.Token
}

func (c *tokenCache) get(hash []byte) (tok *model.Token, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.m[string(hash)], c.gen
}

// put stores what a lookup started at gen found, unless an invalidation came between:
// the row read may already be stale.
func (c *tokenCache) put(hash []byte, tok *model.Token, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil {
		c.m = map[string]*model.Token{}
	}
	c.m[string(hash)] = tok
}

func (c *tokenCache) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}

// TokenByHash finds a token by the SHA-256 of its value, from the cache when it can. The
// token returned is shared: callers must not change it.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*model.Token, error) {
	tok, gen := s.tokens.get(hash)
	if tok != nil {
		return tok, nil
	}
	tok, err := s.Read().TokenByHash(ctx, hash)
	if err != nil {
		return nil, err
	}
	s.tokens.put(hash, tok, gen)
	return tok, nil
}
