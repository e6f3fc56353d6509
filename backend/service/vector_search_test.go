package service_test

import (
	"context"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// TestVectorSearchEdges pins the corners of a search that the REST and GraphQL tests
// do not reach: empty filters, which rankings give a similarity, empty spaces, and
// which error wins when a request has several faults.
func TestVectorSearchEdges(t *testing.T) { pgtest.Engines(t, testVectorSearchEdges) }

func testVectorSearchEdges(t *testing.T, engine string) {
	ctx := context.Background()
	svc := newService(t, engine)
	projects, _ := svc.Projects(ctx, auth.Owner(""))
	owner := auth.Owner(projects[0].ID)
	kb := svc.Knowledge()
	search := func(spaceID int64, in service.VectorSearchInput) ([]model.VectorResult, error) {
		return kb.Search(ctx, owner, spaceID, in)
	}
	space := func(name string) *model.VectorSpace {
		sp, err := kb.CreateSpace(ctx, owner, service.CreateVectorSpaceInput{Name: &name})
		if err != nil {
			t.Fatal(err)
		}
		return sp
	}

	text := space("text")
	var docs []int64
	for _, body := range []string{"# Ports\n\nThe server listens on port 8080.", "# Backups\n\nA nightly backup runs at two."} {
		d, err := kb.AddDocument(ctx, owner, text.ID, service.AddVectorDocumentInput{Name: ptr("d"), Text: &body})
		if err != nil {
			t.Fatal(err)
		}
		docs = append(docs, d.ID)
	}
	q := ptr("which port does the server listen on")

	// Hybrid and vector rankings give each result its similarity; keywords alone none.
	for mode, wantSim := range map[string]bool{service.VectorModeHybrid: true, service.VectorModeVector: true, service.VectorModeKeyword: false} {
		res, err := search(text.ID, service.VectorSearchInput{Query: q, Mode: mode})
		if err != nil || len(res) == 0 || res[0].DocumentID != docs[0] {
			t.Fatalf("%s: %+v %v", mode, res, err)
		}
		for _, r := range res {
			if (r.Similarity != nil) != wantSim {
				t.Errorf("%s: similarity %v, want one: %v", mode, r.Similarity, wantSim)
			}
		}
	}
	// k cuts the fused list; a filter keeps its documents; an empty filter keeps none.
	if res, err := search(text.ID, service.VectorSearchInput{Query: q, K: ptr(1)}); err != nil || len(res) != 1 {
		t.Errorf("k=1: %+v %v", res, err)
	}
	only := &service.VectorFilterInput{DocumentIDs: []int64{docs[1]}}
	if res, err := search(text.ID, service.VectorSearchInput{Query: q, Filter: only}); err != nil || len(res) == 0 || res[0].DocumentID != docs[1] {
		t.Errorf("filter: %+v %v", res, err)
	}
	for _, mode := range []string{service.VectorModeHybrid, service.VectorModeVector, service.VectorModeKeyword} {
		res, err := search(text.ID, service.VectorSearchInput{Query: q, Mode: mode, Filter: &service.VectorFilterInput{DocumentIDs: []int64{}}})
		if err != nil || res == nil || len(res) != 0 {
			t.Errorf("%s, empty filter: %+v %v", mode, res, err)
		}
	}
	// A filter without documentIds filters nothing.
	if res, err := search(text.ID, service.VectorSearchInput{Query: q, Filter: &service.VectorFilterInput{}}); err != nil || len(res) != 2 {
		t.Errorf("filter {}: %+v %v", res, err)
	}

	// A space of client vectors: text ranks by keywords alone, vector mode needs a vector.
	client := space("client")
	chunks := []service.VectorChunkInput{{Text: ptr("blue sky"), Vector: []float32{1, 0, 0}}, {Text: ptr("green grass"), Vector: []float32{0, 1, 0}}}
	if _, err := kb.AddDocument(ctx, owner, client.ID, service.AddVectorDocumentInput{Name: ptr("c"), Chunks: chunks}); err != nil {
		t.Fatal(err)
	}
	if res, err := search(client.ID, service.VectorSearchInput{Query: ptr("sky")}); err != nil || len(res) != 1 || res[0].Similarity != nil {
		t.Errorf("keywords in a client space: %+v %v", res, err)
	}
	res, err := search(client.ID, service.VectorSearchInput{Vector: []float32{0, 2, 0}, K: ptr(1)})
	if err != nil || len(res) != 1 || res[0].Chunk != "green grass" || res[0].Similarity == nil || *res[0].Similarity < 0.99 {
		t.Errorf("client vector: %+v %v", res, err)
	}
	_, err = search(client.ID, service.VectorSearchInput{Query: ptr("sky"), Mode: service.VectorModeVector})
	wantCode(t, err, errs.InvalidArgument)

	// An empty space answers nothing, even where a filled one would refuse the mode.
	empty := space("empty")
	for _, in := range []service.VectorSearchInput{{Query: q}, {Query: q, Mode: service.VectorModeVector}, {Vector: []float32{1, 2}}} {
		if res, err := search(empty.ID, in); err != nil || res == nil || len(res) != 0 {
			t.Errorf("empty space %+v: %+v %v", in, res, err)
		}
	}

	// Which fault is reported: input before the space, the space before its vectors,
	// dimensions before a zero vector.
	for _, c := range []struct {
		name  string
		space int64
		in    service.VectorSearchInput
		code  errs.Code
		says  string
	}{
		{"k before mode", client.ID, service.VectorSearchInput{Query: q, K: ptr(0), Mode: "fuzzy"}, errs.InvalidArgument, "k must be"},
		{"no query", client.ID, service.VectorSearchInput{Query: ptr("  "), Mode: "fuzzy"}, errs.InvalidArgument, "give a query"},
		{"keyword without text", client.ID, service.VectorSearchInput{Vector: []float32{1, 0, 0}, Mode: service.VectorModeKeyword}, errs.InvalidArgument, "needs a query text"},
		{"filter too long", 999, service.VectorSearchInput{Query: q, Filter: &service.VectorFilterInput{DocumentIDs: make([]int64, service.MaxVectorFilterDocuments+1)}}, errs.InvalidArgument, "filter.documentIds"},
		{"space before vector", 999, service.VectorSearchInput{Vector: []float32{0, 0}}, errs.NotFound, "space 999"},
		{"dimensions before zero", client.ID, service.VectorSearchInput{Vector: []float32{0, 0}}, errs.InvalidArgument, "2 dimensions"},
		{"one dimension", client.ID, service.VectorSearchInput{Vector: []float32{1}}, errs.InvalidArgument, "vector has 1 dimension; space"},
		{"zero vector", client.ID, service.VectorSearchInput{Vector: []float32{0, 0, 0}}, errs.InvalidArgument, "zero"},
	} {
		_, err := search(c.space, c.in)
		if errs.CodeOf(err) != c.code || err == nil || !strings.Contains(err.Error(), c.says) {
			t.Errorf("%s: %v, want %s saying %q", c.name, err, c.code, c.says)
		}
	}
}
