package service

import (
	"context"
	"math"
	"sync"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/vector"
)

// maxCachedVectorBytes bounds the decoded vectors kept in memory over every space.
const maxCachedVectorBytes = 1 << 30

// indexCache keeps each space's decoded vectors with the space's version they were
// loaded at. Every write that changes what a search finds raises the version in the
// database (store/vector.go), whichever server or process makes it, and a search reads
// the space, version included, before it asks for the index: a cached index whose
// version is not the space's is loaded again. That one rule keeps the cache right.
type indexCache struct {
	mu    sync.Mutex
	cache map[int64]*cachedIndex
	tick  uint64
	load  map[int64]*sync.Mutex // one loader per space
}

type cachedIndex struct {
	ix       *vector.Index
	version  int64 // the space's version when the load began; the vectors are at least that new
	lastUsed uint64
}

func newIndexCache() *indexCache {
	return &indexCache{cache: map[int64]*cachedIndex{}, load: map[int64]*sync.Mutex{}}
}

// forget drops a deleted space's vectors and loader, to give their memory back.
func (c *indexCache) forget(spaceID int64) {
	c.mu.Lock()
	delete(c.cache, spaceID)
	delete(c.load, spaceID)
	c.mu.Unlock()
}

// cachedLocked returns the space's index if it is cached at version; call with mu held.
func (c *indexCache) cachedLocked(spaceID, version int64) *vector.Index {
	ci := c.cache[spaceID]
	if ci == nil || ci.version != version {
		return nil
	}
	c.tick++
	ci.lastUsed = c.tick
	return ci.ix
}

// index returns the space's vectors at sp's version (or newer), from the cache or
// loaded from the store.
func (k *Knowledge) index(ctx context.Context, sp *model.VectorSpace) (*vector.Index, error) {
	v := k.indexes
	v.mu.Lock()
	if ix := v.cachedLocked(sp.ID, sp.Version); ix != nil {
		v.mu.Unlock()
		return ix, nil
	}
	l := v.load[sp.ID]
	if l == nil {
		l = &sync.Mutex{}
		v.load[sp.ID] = l
	}
	v.mu.Unlock()

	l.Lock() // one load per space at a time; the others wait and then find it cached
	defer l.Unlock()
	v.mu.Lock()
	if ix := v.cachedLocked(sp.ID, sp.Version); ix != nil {
		v.mu.Unlock()
		return ix, nil
	}
	v.mu.Unlock()

	// The chunks are read after the space: they are at sp.Version or newer, never older.
	ix := &vector.Index{Dims: sp.Dimensions, IDs: make([]int64, 0, sp.Chunks), Docs: make([]int64, 0, sp.Chunks),
		Vecs: make([]float32, 0, int(sp.Chunks)*sp.Dimensions)}
	err := k.store.Read().EachVectorChunk(ctx, sp.ID, func(id, doc int64, raw []byte) error {
		if len(raw) != 4*ix.Dims {
			return nil // written before the space's dimensions were fixed; cannot be compared
		}
		var err error
		ix.IDs = append(ix.IDs, id)
		ix.Docs = append(ix.Docs, doc)
		ix.Vecs, err = vector.DecodeInto(ix.Vecs, raw)
		return err
	})
	if err != nil {
		return nil, internal("load vectors", err)
	}
	v.mu.Lock()
	defer v.mu.Unlock()
	// A search that read the space before a newer load keeps its index to itself:
	// versions only go up (space ids are never reused), so the cache keeps the newer.
	if cur := v.cache[sp.ID]; cur == nil || cur.version < sp.Version {
		v.tick++
		v.cache[sp.ID] = &cachedIndex{ix: ix, version: sp.Version, lastUsed: v.tick}
		v.evictLocked()
	}
	return ix, nil
}

// evictLocked drops the least recently used indexes until the cache fits its bound.
func (c *indexCache) evictLocked() {
	for {
		var total int64
		var oldest int64 = -1
		var oldestUse uint64 = math.MaxUint64
		for id, ci := range c.cache {
			total += ci.ix.Bytes()
			if ci.lastUsed < oldestUse {
				oldest, oldestUse = id, ci.lastUsed
			}
		}
		if total <= maxCachedVectorBytes || len(c.cache) <= 1 {
			return
		}
		delete(c.cache, oldest)
	}
}
