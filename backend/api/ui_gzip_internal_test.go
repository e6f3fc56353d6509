package api

import (
	"bytes"
	"compress/gzip"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/gin-gonic/gin"
)

// TestServeFilePrecompressed: a UI file with a .gz beside it (the build's precompress
// step) is sent gzipped to clients that accept it and raw to the others, with Vary
// either way. (The embedded dist/ is empty in tests, so this one feeds serveFile a
// file system of its own.)
func TestServeFilePrecompressed(t *testing.T) {
	js := []byte(strings.Repeat("console.log('agentdesk');\n", 200))
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(js)
	zw.Close()
	fsys := fstest.MapFS{
		"assets/app-1234.js":    {Data: js},
		"assets/app-1234.js.gz": {Data: gz.Bytes()},
		"assets/logo-1234.png":  {Data: []byte("\x89PNG not really")},
	}
	serve := func(name, acceptEncoding string) *httptest.ResponseRecorder {
		w := httptest.NewRecorder()
		c, _ := gin.CreateTestContext(w)
		c.Request = httptest.NewRequest("GET", "/"+name, nil)
		c.Request.Header.Set("Accept-Encoding", acceptEncoding)
		if !serveFile(c, fsys, name, "public, max-age=31536000, immutable") {
			t.Fatalf("%s not served", name)
		}
		return w
	}
	w := serve("assets/app-1234.js", "gzip, br")
	if w.Header().Get("Content-Encoding") != "gzip" || !bytes.Equal(w.Body.Bytes(), gz.Bytes()) || w.Header().Get("Vary") != "Accept-Encoding" {
		t.Errorf("with gzip: Content-Encoding %q Vary %q, %d bytes", w.Header().Get("Content-Encoding"), w.Header().Get("Vary"), w.Body.Len())
	}
	if ct := w.Header().Get("Content-Type"); ct != "text/javascript; charset=utf-8" {
		t.Errorf("Content-Type %q", ct)
	}
	w = serve("assets/app-1234.js", "identity")
	if w.Header().Get("Content-Encoding") != "" || !bytes.Equal(w.Body.Bytes(), js) || w.Header().Get("Vary") != "Accept-Encoding" {
		t.Errorf("without gzip: Content-Encoding %q Vary %q, %d bytes", w.Header().Get("Content-Encoding"), w.Header().Get("Vary"), w.Body.Len())
	}
	w = serve("assets/logo-1234.png", "gzip")
	if w.Header().Get("Content-Encoding") != "" || w.Header().Get("Vary") != "" || w.Code != http.StatusOK {
		t.Errorf("png: Content-Encoding %q Vary %q", w.Header().Get("Content-Encoding"), w.Header().Get("Vary"))
	}
}
