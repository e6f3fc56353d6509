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

// indexCache keeps each space's decoded vectors, dropped whenever the space changes.
type indexCache struct {
	mu    sync.Mutex
	gen   map[int64]uint64 // space -> generation, bumped on every change
	cache map[int64]*cachedIndex
	tick  uint64
	load  map[int64]*sync.Mutex // one loader per space
}

type cachedIndex struct {
	ix       *vector.Index
	gen      uint64
	lastUsed uint64
}

func newIndexCache() *indexCache {
	return &indexCache{gen: map[int64]uint64{}, cache: map[int64]*cachedIndex{}, load: map[int64]*sync.Mutex{}}
}

// invalidate forgets a space's cached vectors; call it after a change has committed.
func (c *indexCache) invalidate(spaceID int64) {
	c.mu.Lock()
	c.gen[spaceID]++
	delete(c.cache, spaceID)
	c.mu.Unlock()
}

// index returns the space's vectors, from the cache or loaded from the store.
func (k *Knowledge) index(ctx context.Context, sp *model.VectorSpace) (*vector.Index, error) {
	v := k.indexes
	v.mu.Lock()
	if c := v.cache[sp.ID]; c != nil {
		v.tick++
		c.lastUsed = v.tick
		v.mu.Unlock()
		return c.ix, nil
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
	if c := v.cache[sp.ID]; c != nil {
		v.mu.Unlock()
		return c.ix, nil
	}
	gen := v.gen[sp.ID]
	v.mu.Unlock()

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
	if v.gen[sp.ID] == gen { // nothing changed while loading
		v.tick++
		v.cache[sp.ID] = &cachedIndex{ix: ix, gen: gen, lastUsed: v.tick}
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
