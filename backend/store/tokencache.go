package store

import (
	"context"
	"sync"

	"github.com/agentdesk/agentdesk/backend/model"
)

// credCache remembers what authentication looks up on every request (tokens by hash,
// project secrets, agents by name), so that authenticating costs no query. A committed
// write that changes any of them (a token revoked or rotated, an agent deleted, a project's secret rotated) empties
// the cache before the write is acknowledged, so the change holds from then on.
type credCache[K comparable, V any] struct {
	mu  sync.Mutex
	gen uint64 // bumped by every invalidation
	m   map[K]V
}

func (c *credCache[K, V]) get(k K) (v V, ok bool, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	v, ok = c.m[k]
	return v, ok, c.gen
}

// put stores what a lookup started at gen found, unless an invalidation came between:
// the row read may already be stale.
func (c *credCache[K, V]) put(k K, v V, gen uint64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.gen != gen {
		return
	}
	if c.m == nil {
		c.m = map[K]V{}
	}
	c.m[k] = v
}

func (c *credCache[K, V]) invalidate() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.gen++
	clear(c.m)
}

// cached looks k up in c, else loads it (and caches what was found: not-found is not
// cached, so a row created later is found).
func cached[K comparable, V any](c *credCache[K, V], k K, load func() (V, error)) (V, error) {
	v, ok, gen := c.get(k)
	if ok {
		return v, nil
	}
	v, err := load()
	if err != nil {
		return v, err
	}
	c.put(k, v, gen)
	return v, nil
}

type agentKey struct{ projectID, name string }

// credentials are the store's authentication caches.
type credentials struct {
	tokens   credCache[string, *model.Token]
	projects credCache[string, *model.Project] // a project's secret changes when rotated
	agents   credCache[agentKey, *model.Agent]
}

func (c *credentials) invalidate() {
	c.tokens.invalidate()
	c.projects.invalidate()
	c.agents.invalidate()
}

// invalidateAll forgets the projects too: another process may have changed anything.
func (c *credentials) invalidateAll() {
	c.invalidate()
	c.projects.invalidate()
}

// TokenByHash finds a token by the SHA-256 of its value, from the cache when it can. The
// token returned is shared: callers must not change it.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*model.Token, error) {
	s.watch.check(ctx) // another process may have revoked it (foreign.go)
	return cached(&s.creds.tokens, string(hash), func() (*model.Token, error) { return s.Read().TokenByHash(ctx, hash) })
}

// ProjectForAuth loads a project, from the cache when it can, for checking an agent's
// digest against its secret. The project returned is shared: callers must not change it.
func (s *Store) ProjectForAuth(ctx context.Context, id string) (*model.Project, error) {
	s.watch.check(ctx) // for AgentForAuth too, which comes next
	return cached(&s.creds.projects, id, func() (*model.Project, error) { return s.Read().Project(ctx, id) })
}

// AgentForAuth finds an agent of the project by name, from the cache when it can. The
// agent returned is shared: callers must not change it.
//
// Other processes' changes: AgentForAuth follows ProjectForAuth in every request, which
// has just checked for them.
func (s *Store) AgentForAuth(ctx context.Context, projectID, name string) (*model.Agent, error) {
	return cached(&s.creds.agents, agentKey{projectID, name}, func() (*model.Agent, error) {
		return s.Read().AgentByName(ctx, projectID, name)
	})
}
