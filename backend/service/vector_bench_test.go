package service_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// BenchmarkVectorSearch times a search of a space whose vectors are already cached
// (20,000 chunks, 384 dimensions, the first search loads them before the timer):
// the exact cosine scan alone (vector) and with the keyword ranking and fusion (hybrid).
//
//	go test ./backend/service -run '^$' -bench VectorSearch -count 5
func BenchmarkVectorSearch(b *testing.B) {
	ctx := context.Background()
	st, err := store.Open(ctx, b.TempDir()+"/agentdesk.db", store.Options{Synchronous: "NORMAL"})
	if err != nil {
		b.Fatal(err)
	}
	svc := service.New(st, service.Options{})
	b.Cleanup(func() { svc.Close(); st.Close() })
	if err := svc.EnsureDefaultProject(ctx); err != nil {
		b.Fatal(err)
	}
	projects, _ := svc.Projects(ctx, auth.Owner(""))
	owner := auth.Owner(projects[0].ID)
	kb := svc.Knowledge()
	sp, err := kb.CreateSpace(ctx, owner, service.CreateVectorSpaceInput{Name: ptr("bench")})
	if err != nil {
		b.Fatal(err)
	}
	const chunks, dims = 20_000, 384
	rnd := rand.New(rand.NewPCG(1, 2))
	vec := func() []float32 {
		v := make([]float32, dims)
		for i := range v {
			v[i] = float32(rnd.NormFloat64())
		}
		return v
	}
	words := []string{"port", "backup", "server", "agent", "task", "night", "disk", "token"}
	in := make([]service.VectorChunkInput, chunks)
	for i := range in {
		in[i] = service.VectorChunkInput{Text: ptr(fmt.Sprintf("chunk %d about %s and %s", i, words[i%len(words)], words[(i/8)%len(words)])), Vector: vec()}
	}
	if _, err := kb.AddDocument(ctx, owner, sp.ID, service.AddVectorDocumentInput{Name: ptr("big"), Chunks: in}); err != nil {
		b.Fatal(err)
	}
	for _, c := range []struct{ mode, text string }{{service.VectorModeVector, ""}, {service.VectorModeHybrid, "backup server night"}} {
		b.Run(c.mode, func(b *testing.B) {
			q := service.VectorSearchInput{Vector: vec(), K: ptr(10), Mode: c.mode}
			if c.text != "" {
				q.Query = ptr(c.text)
			}
			if _, err := kb.Search(ctx, owner, sp.ID, q); err != nil { // loads the index
				b.Fatal(err)
			}
			for b.Loop() {
				if res, err := kb.Search(ctx, owner, sp.ID, q); err != nil || len(res) != 10 {
					b.Fatalf("%d results, %v", len(res), err)
				}
			}
		})
	}
}
