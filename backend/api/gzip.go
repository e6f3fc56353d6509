package api

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"io/fs"
	"mime"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
)

// gzip for text answers (JSON, HTML, JS, CSS, SVG, plain text) when the client sends
// Accept-Encoding: gzip. Our own small writer rather than a library (klauspost's gzhttp
// would be a new module for what compress/gzip and a hundred lines do). Never
// compressed: WebSocket upgrades (not wrapped at all), 1xx, 204 and 304, answers that
// already carry a Content-Encoding (the precompressed OpenAPI document and UI assets),
// types that are compressed already (images, PDFs, the backup), and answers under
// minGzipSize, which gzip would barely shrink (most single tasks).

const minGzipSize = 1024

var gzipWriters = sync.Pool{New: func() any {
	w, _ := gzip.NewWriterLevel(nil, gzip.DefaultCompression)
	return w
}}

// acceptsGzip reports whether an Accept-Encoding value accepts gzip (RFC 9110 12.5.3:
// gzip or x-gzip, else *, with a q above 0).
func acceptsGzip(header string) bool {
	gzipQ, anyQ := -1.0, -1.0
	for _, part := range strings.Split(header, ",") {
		name, params, _ := strings.Cut(part, ";")
		q := 1.0
		if v, ok := strings.CutPrefix(strings.TrimSpace(params), "q="); ok {
			var err error
			if q, err = strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
				q = 0
			}
		}
		switch strings.ToLower(strings.TrimSpace(name)) {
		case "gzip", "x-gzip":
			gzipQ = q
		case "*":
			anyQ = q
		}
	}
	if gzipQ >= 0 {
		return gzipQ > 0
	}
	return anyQ > 0
}

// compressible reports whether a Content-Type is text that gzip shrinks.
func compressible(contentType string) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	switch {
	case strings.HasPrefix(mt, "text/") && mt != "text/event-stream":
		return true
	case mt == "application/json", strings.HasSuffix(mt, "+json"), mt == "application/javascript",
		mt == "application/xml", strings.HasSuffix(mt, "+xml"): // image/svg+xml included
		return true
	}
	return false
}

// addVary adds Accept-Encoding to Vary once: the answer depends on it for every text
// type, compressed this time or not, so that caches keep the two apart.
func addVary(h http.Header) {
	for _, v := range h.Values("Vary") {
		for _, f := range strings.Split(v, ",") {
			if t := strings.TrimSpace(f); t == "*" || strings.EqualFold(t, "Accept-Encoding") {
				return
			}
		}
	}
	h.Add("Vary", "Accept-Encoding")
}

// gzipWriter compresses the answer when it is text, the client accepts gzip and the
// body reaches minGzipSize; until it knows the size it holds the first bytes back.
type gzipWriter struct {
	http.ResponseWriter
	accepts bool
	status  int  // 0 until WriteHeader
	sent    bool // the header has gone to the client
	hold    bool // compressible and accepted, size not known yet: buf holds the body
	buf     []byte
	gz      *gzip.Writer // non-nil while compressing
}

func newGzipWriter(w http.ResponseWriter, r *http.Request) *gzipWriter {
	return &gzipWriter{ResponseWriter: w, accepts: acceptsGzip(r.Header.Get("Accept-Encoding"))}
}

func (w *gzipWriter) WriteHeader(status int) {
	if w.status != 0 || w.sent {
		return
	}
	if status >= 100 && status < 200 {
		w.ResponseWriter.WriteHeader(status) // informational: the real answer follows
		return
	}
	w.status = status
	h := w.Header()
	if h.Get("Content-Encoding") != "" || !compressible(h.Get("Content-Type")) {
		w.send()
		return
	}
	addVary(h)
	size, err := strconv.Atoi(h.Get("Content-Length"))
	known := err == nil
	if !w.accepts || status == http.StatusNoContent || status == http.StatusNotModified || known && size < minGzipSize {
		w.send()
		return
	}
	if known {
		w.startGzip()
		return
	}
	w.hold = true
}

// send writes the header as it is.
func (w *gzipWriter) send() {
	w.sent = true
	w.ResponseWriter.WriteHeader(w.status)
}

// startGzip writes the header of a compressed answer, then what was held back.
func (w *gzipWriter) startGzip() {
	h := w.Header()
	h.Set("Content-Encoding", "gzip")
	h.Del("Content-Length")
	w.gz = gzipWriters.Get().(*gzip.Writer)
	w.gz.Reset(w.ResponseWriter)
	w.hold = false
	w.send()
	if len(w.buf) > 0 {
		_, _ = w.gz.Write(w.buf)
		w.buf = nil
	}
}

func (w *gzipWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		if w.Header().Get("Content-Type") == "" {
			w.Header().Set("Content-Type", http.DetectContentType(p)) // as net/http would
		}
		w.WriteHeader(http.StatusOK)
	}
	switch {
	case w.gz != nil:
		return w.gz.Write(p)
	case w.hold:
		w.buf = append(w.buf, p...)
		if len(w.buf) >= minGzipSize {
			w.startGzip()
		}
		return len(p), nil
	}
	return w.ResponseWriter.Write(p)
}

// Flush sends what there is: a handler that flushes wants its bytes on their way.
func (w *gzipWriter) Flush() {
	if w.hold {
		w.startGzip()
	}
	if w.gz != nil {
		_ = w.gz.Flush()
	}
	_ = http.NewResponseController(w.ResponseWriter).Flush()
}

// Hijack is only reached by a connection that was not upgraded through this writer
// (upgrades are never wrapped); it hands the connection over as net/http does.
func (w *gzipWriter) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	return http.NewResponseController(w.ResponseWriter).Hijack()
}

func (w *gzipWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// close ends the answer once the handler has returned: a body held back because it was
// small goes out as it is, a compressed one gets its gzip trailer.
func (w *gzipWriter) close() {
	switch {
	case w.hold:
		w.hold = false
		w.Header().Set("Content-Length", strconv.Itoa(len(w.buf)))
		w.send()
		_, _ = w.ResponseWriter.Write(w.buf)
	case w.gz != nil:
		_ = w.gz.Close()
		w.gz.Reset(nil)
		gzipWriters.Put(w.gz)
		w.gz = nil
	}
}

// gzipBytes compresses an embedded text once and for all, as hard as gzip can.
func gzipBytes(raw []byte) []byte {
	var b bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&b, gzip.BestCompression)
	_, _ = zw.Write(raw)
	_ = zw.Close()
	return b.Bytes()
}

// precompressed picks the body of an answer that has a gzip copy made in advance: the
// copy when the client accepts gzip (saying so in Content-Encoding, which keeps
// gzipWriter off it), else the raw bytes. gz is only called when needed.
func precompressed(w http.ResponseWriter, r *http.Request, raw []byte, gz func() []byte) []byte {
	addVary(w.Header())
	if acceptsGzip(r.Header.Get("Accept-Encoding")) {
		if data := gz(); data != nil {
			w.Header().Set("Content-Encoding", "gzip")
			return data
		}
	}
	return raw
}

// gzSibling returns the build's precompressed copy of name (name.gz), or nil.
func gzSibling(fsys fs.FS, name string) func() []byte {
	return func() []byte {
		data, _ := fs.ReadFile(fsys, name+".gz")
		return data
	}
}
