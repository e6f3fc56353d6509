package service_test

import (
	"context"
	"encoding/json"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/service"
)

var spaces = regexp.MustCompile(`\s+`)

// TestVectorSearchQuality ingests the corpus of backend/vector/testdata through the real
// service (real SQLite, the built-in embedder), asks every labelled question in the
// three modes, and reports MRR@10: the mean of 1/rank of the first chunk that holds the
// answer (0 past rank 10), and recall@5. Each mode must stay above its floors, and the
// fusion must not be worse than either ranking alone.
func TestVectorSearchQuality(t *testing.T) { pgtest.Engines(t, testVectorSearchQuality) }

func testVectorSearchQuality(t *testing.T, engine string) {
	ctx := context.Background()
	svc := newService(t, engine)
	projects, _ := svc.Projects(ctx, auth.Owner(""))
	owner := auth.Owner(projects[0].ID)
	name := "eval"
	sp, err := svc.Knowledge().CreateSpace(ctx, owner, service.CreateVectorSpaceInput{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	files, _ := filepath.Glob("../vector/testdata/corpus/*")
	if len(files) < 5 {
		t.Fatalf("corpus has %d files", len(files))
	}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		base, text := filepath.Base(f), string(raw)
		if _, err := svc.Knowledge().AddDocument(ctx, owner, sp.ID, service.AddVectorDocumentInput{Name: &base, Text: &text}); err != nil {
			t.Fatalf("ingest %s: %v", base, err)
		}
	}
	var set []struct{ Q, A string }
	raw, err := os.ReadFile("../vector/testdata/eval.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &set); err != nil {
		t.Fatal(err)
	}
	if len(set) < 20 {
		t.Fatalf("only %d questions", len(set))
	}
	k := 10
	mrr, recall5 := map[string]float64{}, map[string]float64{}
	for _, mode := range []string{service.VectorModeKeyword, service.VectorModeVector, service.VectorModeHybrid} {
		var sum float64
		var top5 int
		for _, item := range set {
			q := item.Q
			res, err := svc.Knowledge().Search(ctx, owner, sp.ID, service.VectorSearchInput{Query: &q, K: &k, Mode: mode})
			if err != nil {
				t.Fatalf("%s %q: %v", mode, q, err)
			}
			want := spaces.ReplaceAllString(item.A, " ")
			rank := 0
			for i, r := range res {
				if strings.Contains(spaces.ReplaceAllString(r.Chunk, " "), want) {
					rank = i + 1
					break
				}
			}
			if rank > 0 && rank <= 5 {
				top5++
			}
			if rank > 0 {
				sum += 1 / float64(rank)
			} else if testing.Verbose() {
				t.Logf("%-7s missed: %s", mode, q)
			}
		}
		mrr[mode] = sum / float64(len(set))
		recall5[mode] = float64(top5) / float64(len(set))
	}
	t.Logf("MRR@10 over %d questions, %d documents: BM25 %.3f, vectors (builtin:hash-384) %.3f, fusion (RRF k=60) %.3f",
		len(set), len(files), mrr[service.VectorModeKeyword], mrr[service.VectorModeVector], mrr[service.VectorModeHybrid])
	t.Logf("recall@5: BM25 %.3f, vectors %.3f, fusion %.3f", recall5[service.VectorModeKeyword], recall5[service.VectorModeVector], recall5[service.VectorModeHybrid])
	// Absolute floors, a little below what this corpus measured (MRR@10 0.729, 0.593,
	// 0.746; recall@5 23, 20 and 23 of 26): empty or shuffled results fail here, where
	// the comparison below would pass on all zeros. Raise them when search improves.
	floors := map[string]struct{ mrr, recall5 float64 }{
		service.VectorModeKeyword: {0.70, 0.84},
		service.VectorModeVector:  {0.56, 0.73},
		service.VectorModeHybrid:  {0.72, 0.84},
	}
	for mode, f := range floors {
		if mrr[mode] < f.mrr || recall5[mode] < f.recall5 {
			t.Errorf("%s: MRR@10 %.3f, recall@5 %.3f; the floors are %.2f and %.2f", mode, mrr[mode], recall5[mode], f.mrr, f.recall5)
		}
	}
	if mrr[service.VectorModeHybrid] < mrr[service.VectorModeKeyword] || mrr[service.VectorModeHybrid] < mrr[service.VectorModeVector] {
		t.Errorf("the fusion (%.3f) is worse than a ranking alone (BM25 %.3f, vectors %.3f)", mrr[service.VectorModeHybrid], mrr[service.VectorModeKeyword], mrr[service.VectorModeVector])
	}
}
