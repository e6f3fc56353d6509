// Package logbuf gathers log lines into few writes.
//
// The server logs one line per request. Written one by one, each line is a write system
// call in the request's path, a few microseconds each, thousands of times a second.
// Gathered, the lines of up to a tenth of a second go out in one write. Warnings and
// errors are written at once, with everything before them, and so is what is left when
// the program ends normally. What a kill -9 or a crash takes is at most the last
// tenth of a second of request lines; data is never affected.
package logbuf

import (
	"context"
	"io"
	"log/slog"
	"sync"
	"time"
)

const (
	// Delay is the longest a line waits before it is written.
	Delay = 100 * time.Millisecond
	// limit: the lines are written at once when this many bytes wait.
	limit = 64 << 10
)

// Writer holds what is written to it and passes it on to out in one write, at most
// Delay later.
type Writer struct {
	out   io.Writer
	mu    sync.Mutex
	buf   []byte
	armed bool // a flush is scheduled
}

// New returns a Writer that writes to out.
func New(out io.Writer) *Writer { return &Writer{out: out} }

// Write keeps p for the next flush. Each call must be whole lines, as slog's handlers
// write them, so that a flush never splits a line.
func (w *Writer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.buf = append(w.buf, p...)
	if len(w.buf) >= limit {
		return len(p), w.flushLocked()
	}
	if !w.armed {
		w.armed = true
		time.AfterFunc(Delay, func() { _ = w.Flush() })
	}
	return len(p), nil
}

// Flush writes what is waiting.
func (w *Writer) Flush() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.flushLocked()
}

func (w *Writer) flushLocked() error {
	w.armed = false // a scheduled flush that finds nothing does nothing
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.out.Write(w.buf)
	if cap(w.buf) > 4*limit { // after a burst, do not keep a large buffer
		w.buf = nil
	} else {
		w.buf = w.buf[:0]
	}
	return err
}

// Handler wraps a slog.Handler that writes to w: records at level Warn and above are
// written at once, with the lines before them.
func Handler(h slog.Handler, w *Writer) slog.Handler { return handler{h, w} }

type handler struct {
	slog.Handler
	w *Writer
}

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	err := h.Handler.Handle(ctx, r)
	if r.Level >= slog.LevelWarn {
		if ferr := h.w.Flush(); err == nil {
			err = ferr
		}
	}
	return err
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	return handler{h.Handler.WithAttrs(attrs), h.w}
}

func (h handler) WithGroup(name string) slog.Handler {
	return handler{h.Handler.WithGroup(name), h.w}
}
