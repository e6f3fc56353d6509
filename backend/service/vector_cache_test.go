package service_test

import (
	"context"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
	"github.com/agentdesk/agentdesk/backend/store"
)

// TestVectorCacheSeesOtherWriters: two services on one database, as two servers on one
// PostgreSQL database (here two stores on one SQLite file). One has a space's vectors
// cached when the other uploads or deletes documents of that space; its next search
// sees the change.
func TestVectorCacheSeesOtherWriters(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "agentdesk.db")
	open := func() *service.Service {
		st, err := store.Open(ctx, path, store.Options{Synchronous: "NORMAL"})
		if err != nil {
			t.Fatal(err)
		}
		svc := service.New(st, service.Options{})
		t.Cleanup(func() { svc.Close(); st.Close() })
		return svc
	}
	a := open()
	if err := a.EnsureDefaultProject(ctx); err != nil {
		t.Fatal(err)
	}
	b := open()
	projects, err := a.Projects(ctx, auth.Owner(""))
	if err != nil {
		t.Fatal(err)
	}
	owner := auth.Owner(projects[0].ID)

	sp, err := a.Knowledge().CreateSpace(ctx, owner, service.CreateVectorSpaceInput{Name: ptr("shared")})
	if err != nil {
		t.Fatal(err)
	}
	add := func(svc *service.Service, text string, v []float32) int64 {
		t.Helper()
		d, err := svc.Knowledge().AddDocument(ctx, owner, sp.ID, service.AddVectorDocumentInput{Name: ptr(text),
			Chunks: []service.VectorChunkInput{{Text: ptr(text), Vector: v}}})
		if err != nil {
			t.Fatal(err)
		}
		return d.ID
	}
	// The chunks a's vector search finds, best first.
	found := func(v []float32, k int) []string {
		t.Helper()
		res, err := a.Knowledge().Search(ctx, owner, sp.ID, service.VectorSearchInput{Vector: v, K: &k, Mode: service.VectorModeVector})
		if err != nil {
			t.Fatal(err)
		}
		out := []string{}
		for _, r := range res {
			out = append(out, r.Chunk)
		}
		return out
	}
	want := func(what string, got []string, want ...string) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("%s: found %q, want %q", what, got, want)
		}
		for i := range got {
			if got[i] != want[i] {
				t.Fatalf("%s: found %q, want %q", what, got, want)
			}
		}
	}

	add(a, "blue sky", []float32{1, 0, 0})
	want("a's own upload", found([]float32{0, 1, 0}, 3), "blue sky") // now cached in a
	green := add(b, "green grass", []float32{0, 1, 0})
	want("b's upload", found([]float32{0, 1, 0}, 1), "green grass")
	add(b, "red rose", []float32{0.3, 0, 1})
	want("b's second upload", found([]float32{0.1, 1, 0}, 3), "green grass", "blue sky", "red rose")

	// b deletes the best match: a's next search gives the next best, k results still.
	if err := b.Knowledge().DeleteDocument(ctx, owner, sp.ID, green); err != nil {
		t.Fatal(err)
	}
	want("b's delete", found([]float32{0.1, 1, 0}, 1), "blue sky")

	// b deletes the space and makes another, which uploads a document like the first
	// one's: a finds the new space's chunk, never the deleted one's, even where SQLite
	// would give the deleted space's id again.
	if err := b.Knowledge().DeleteSpace(ctx, owner, sp.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Knowledge().Search(ctx, owner, sp.ID, service.VectorSearchInput{Vector: []float32{1, 0, 0}}); errs.CodeOf(err) != errs.NotFound {
		t.Fatalf("a searched a space that b deleted: %v", err)
	}
	sp, err = a.Knowledge().CreateSpace(ctx, owner, service.CreateVectorSpaceInput{Name: ptr("first")})
	if err != nil {
		t.Fatal(err)
	}
	add(a, "old", []float32{1, 0, 0})
	want("a's upload to the new space", found([]float32{1, 0, 0}, 3), "old")
	if err := b.Knowledge().DeleteSpace(ctx, owner, sp.ID); err != nil {
		t.Fatal(err)
	}
	first := sp.ID
	sp, err = b.Knowledge().CreateSpace(ctx, owner, service.CreateVectorSpaceInput{Name: ptr("second")})
	if err != nil {
		t.Fatal(err)
	}
	add(b, "new", []float32{0, 1, 0})
	res, err := a.Knowledge().Search(ctx, owner, sp.ID, service.VectorSearchInput{Vector: []float32{0, 1, 0}, Mode: service.VectorModeVector})
	if err != nil || len(res) != 1 || res[0].Chunk != "new" || res[0].Similarity == nil || *res[0].Similarity < 0.99 {
		got := fmt.Sprintf("%+v", res)
		if len(res) == 1 && res[0].Similarity != nil {
			got = fmt.Sprintf("%q with similarity %.2f", res[0].Chunk, *res[0].Similarity)
		}
		t.Fatalf("the space b made after deleting space %d (now space %d): found %s (%v), want \"new\" with similarity 1", first, sp.ID, got, err)
	}
}
