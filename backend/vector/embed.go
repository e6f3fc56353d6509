package vector

import (
	"context"
	"hash/fnv"
	"math"
)

// Embedder turns texts into vectors. Implementations must be safe for concurrent use.
// Name identifies the model: a space remembers the embedder its vectors came from, and
// text queries are embedded only by the same one.
type Embedder interface {
	Name() string
	// Dimensions is the length of the vectors, or 0 when known only after a first call.
	Dimensions() int
	// Embed returns one vector per text, in order.
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// HashDimensions is the length of the built-in embedder's vectors.
const HashDimensions = 384

// HashEmbedderName is the name spaces record for the built-in embedder.
const HashEmbedderName = "builtin:hash-384"

// HashEmbedder is the built-in embedder: feature hashing, not a learned model. Each
// word (minus common English stop words) and each of its character 3- and 4-grams is
// hashed (FNV-1a) to one of 384 dimensions with a hashed sign; word counts are damped
// (1 + ln tf) and the vector is L2-normalised. It needs no model download, runs offline,
// is deterministic and fast, and catches shared words and word parts (plural, prefix,
// typo); it knows no synonyms or meaning, which is why search fuses it with BM25 and why
// an OpenAI-compatible endpoint can replace it (--embedder-url).
type HashEmbedder struct{}

func (HashEmbedder) Name() string    { return HashEmbedderName }
func (HashEmbedder) Dimensions() int { return HashDimensions }

// Embed never fails.
func (h HashEmbedder) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = h.Vector(t)
	}
	return out, nil
}

// Vector embeds one text.
func (HashEmbedder) Vector(text string) []float32 {
	v := make([]float32, HashDimensions)
	tf := map[string]int{}
	for _, w := range Words(text) {
		if !stopWords[w] {
			tf[w]++
		}
	}
	for w, n := range tf {
		weight := float32(1 + math.Log(float64(n)))
		addFeature(v, "w:"+w, weight)
		padded := []rune("<" + w + ">")
		var grams int
		for size := 3; size <= 4; size++ {
			grams += max(0, len(padded)-size+1)
		}
		if grams == 0 {
			continue
		}
		gw := weight * 0.6 / float32(math.Sqrt(float64(grams)))
		for size := 3; size <= 4; size++ {
			for i := 0; i+size <= len(padded); i++ {
				addFeature(v, "c:"+string(padded[i:i+size]), gw)
			}
		}
	}
	Normalize(v)
	return v
}

func addFeature(v []float32, feature string, weight float32) {
	h := fnv.New64a()
	h.Write([]byte(feature))
	sum := h.Sum64()
	i := sum % uint64(len(v))
	if sum>>63 == 1 {
		weight = -weight
	}
	v[i] += weight
}

// Normalize scales v to unit length in place (a zero vector stays zero) and reports
// whether it was non-zero.
func Normalize(v []float32) bool {
	var sum float64
	for _, x := range v {
		sum += float64(x) * float64(x)
	}
	if sum == 0 || math.IsNaN(sum) || math.IsInf(sum, 0) {
		return false
	}
	inv := float32(1 / math.Sqrt(sum))
	for i := range v {
		v[i] *= inv
	}
	return true
}

// stopWords are frequent English words that carry no topic.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range []string{"a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "does", "for", "from",
		"has", "have", "how", "i", "if", "in", "into", "is", "it", "its", "of", "on", "or", "so", "than", "that", "the",
		"their", "then", "there", "these", "this", "to", "was", "we", "what", "when", "where", "which", "who", "why",
		"will", "with", "you", "your", "my", "me", "our", "they", "them", "he", "she", "his", "her", "not", "no",
		"should", "would", "could", "been", "being", "were", "am", "did", "get", "gets", "s", "t"} {
		m[w] = true
	}
	return m
}()
