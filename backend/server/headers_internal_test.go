package server

import (
	"crypto/sha256"
	"encoding/base64"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestPlaygroundCSPHashes: the GraphQL page's policy allows its inline script and style
// by hash; an edit of the page must update them (or the page stops working).
func TestPlaygroundCSPHashes(t *testing.T) {
	page, err := os.ReadFile("../graphql/playground.html")
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range []string{"script", "style"} {
		blocks := regexp.MustCompile(`(?s)<`+tag+`>(.*?)</`+tag+`>`).FindAllSubmatch(page, -1)
		if len(blocks) != 1 {
			t.Fatalf("%d inline <%s> blocks in playground.html; the policy allows exactly one", len(blocks), tag)
		}
		sum := sha256.Sum256(blocks[0][1])
		want := tag + "-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) + "'"
		if !strings.Contains(playgroundCSP, want) {
			t.Errorf("playgroundCSP lacks %s: update it in headers.go", want)
		}
	}
	if regexp.MustCompile(`(?i)\s(src|href)=`).Match(page) {
		t.Error("playground.html loads a file; playgroundCSP allows none")
	}
}
