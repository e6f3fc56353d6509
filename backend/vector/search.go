package vector

import (
	"container/heap"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sort"
	"sync"
)

// Encode stores a vector as a BLOB: little-endian float32s.
func Encode(v []float32) []byte {
	b := make([]byte, 4*len(v))
	for i, x := range v {
		binary.LittleEndian.PutUint32(b[4*i:], math.Float32bits(x))
	}
	return b
}

// DecodeInto appends the vector stored in b to dst.
func DecodeInto(dst []float32, b []byte) ([]float32, error) {
	if len(b)%4 != 0 {
		return dst, fmt.Errorf("vector blob of %d bytes is not float32s", len(b))
	}
	for i := 0; i+4 <= len(b); i += 4 {
		dst = append(dst, math.Float32frombits(binary.LittleEndian.Uint32(b[i:])))
	}
	return dst, nil
}

// Dot is the dot product of two vectors of the same length; for unit vectors it is
// their cosine similarity.
func Dot(a, b []float32) float32 {
	b = b[:len(a)]
	var s0, s1, s2, s3 float32
	i := 0
	for ; i+8 <= len(a); i += 8 {
		s0 += a[i]*b[i] + a[i+4]*b[i+4]
		s1 += a[i+1]*b[i+1] + a[i+5]*b[i+5]
		s2 += a[i+2]*b[i+2] + a[i+6]*b[i+6]
		s3 += a[i+3]*b[i+3] + a[i+7]*b[i+7]
	}
	for ; i < len(a); i++ {
		s0 += a[i] * b[i]
	}
	return s0 + s1 + s2 + s3
}

// Index is a space's vectors in memory, for exact search: chunk i has id IDs[i], belongs
// to document Docs[i], and its unit vector is Vecs[i*Dims : (i+1)*Dims].
type Index struct {
	Dims int
	IDs  []int64
	Docs []int64
	Vecs []float32
}

// Add appends a chunk whose vector is already normalised.
func (ix *Index) Add(id, doc int64, v []float32) {
	ix.IDs = append(ix.IDs, id)
	ix.Docs = append(ix.Docs, doc)
	ix.Vecs = append(ix.Vecs, v...)
}

// Len is the number of chunks.
func (ix *Index) Len() int { return len(ix.IDs) }

// Bytes is roughly the memory the index holds.
func (ix *Index) Bytes() int64 { return int64(len(ix.Vecs))*4 + int64(len(ix.IDs))*16 }

// Hit is a chunk and its score.
type Hit struct {
	ID    int64
	Score float32
}

// hitHeap is a min-heap on score: its root is the worst of the best k so far.
type hitHeap []Hit

func (h hitHeap) Len() int { return len(h) }
func (h hitHeap) Less(i, j int) bool {
	return h[i].Score < h[j].Score || h[i].Score == h[j].Score && h[i].ID > h[j].ID
}
func (h hitHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *hitHeap) Push(x any)   { *h = append(*h, x.(Hit)) }
func (h *hitHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// Search returns the k chunks most similar to q (a unit vector of ix.Dims), best first,
// by exact cosine over every chunk; allow, if not nil, keeps only some documents. The
// scan is split over the CPUs, each part keeping its own bounded heap.
func (ix *Index) Search(q []float32, k int, allow func(doc int64) bool) []Hit {
	n := ix.Len()
	if k <= 0 || n == 0 {
		return nil
	}
	parts := runtime.GOMAXPROCS(0)
	if n < 4096 {
		parts = 1
	}
	per := (n + parts - 1) / parts
	heaps := make([]hitHeap, parts)
	var wg sync.WaitGroup
	for p := 0; p < parts; p++ {
		lo, hi := p*per, min(n, (p+1)*per)
		if lo >= hi {
			continue
		}
		wg.Add(1)
		go func(p, lo, hi int) {
			defer wg.Done()
			h := make(hitHeap, 0, k+1)
			d := ix.Dims
			for i := lo; i < hi; i++ {
				if allow != nil && !allow(ix.Docs[i]) {
					continue
				}
				s := Dot(q, ix.Vecs[i*d:(i+1)*d])
				if len(h) < k {
					heap.Push(&h, Hit{ix.IDs[i], s})
				} else if s > h[0].Score {
					h[0] = Hit{ix.IDs[i], s}
					heap.Fix(&h, 0)
				}
			}
			heaps[p] = h
		}(p, lo, hi)
	}
	wg.Wait()
	var all []Hit
	for _, h := range heaps {
		all = append(all, h...)
	}
	sort.Slice(all, func(i, j int) bool {
		if all[i].Score != all[j].Score {
			return all[i].Score > all[j].Score
		}
		return all[i].ID < all[j].ID
	})
	if len(all) > k {
		all = all[:k]
	}
	return all
}

// RRFK is the constant of reciprocal-rank fusion (Cormack et al. use 60).
const RRFK = 60

// Fuse merges rankings (each a list of chunk ids, best first) by reciprocal-rank
// fusion: a chunk scores the sum of 1/(RRFK + rank) over the rankings it appears in
// (rank from 1). It returns chunk ids and scores, best first; ties go to the lower id.
func Fuse(rankings ...[]int64) []Hit {
	score := map[int64]float64{}
	for _, r := range rankings {
		for i, id := range r {
			score[id] += 1 / float64(RRFK+i+1)
		}
	}
	out := make([]Hit, 0, len(score))
	for id, s := range score {
		out = append(out, Hit{ID: id, Score: float32(s)})
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return out[i].ID < out[j].ID
	})
	return out
}
