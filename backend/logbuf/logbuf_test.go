package logbuf

import (
	"bytes"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"
)

// out records each write it receives.
type out struct {
	mu     sync.Mutex
	writes []string
}

func (o *out) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.writes = append(o.writes, string(p))
	return len(p), nil
}

func (o *out) text() (string, int) {
	o.mu.Lock()
	defer o.mu.Unlock()
	return strings.Join(o.writes, ""), len(o.writes)
}

func TestLinesGoOutTogetherWithinTheDelay(t *testing.T) {
	o := &out{}
	w := New(o)
	log := slog.New(Handler(slog.NewTextHandler(w, nil), w))
	start := time.Now()
	for i := range 100 {
		log.Info("request", "n", i)
	}
	if got, _ := o.text(); got != "" {
		t.Fatalf("info lines were written at once: %q", got)
	}
	for {
		got, writes := o.text()
		if strings.Count(got, "msg=request") == 100 {
			if writes != 1 {
				t.Errorf("100 lines took %d writes, want 1", writes)
			}
			if waited := time.Since(start); waited < Delay {
				t.Errorf("written after %v, before the delay of %v", waited, Delay)
			}
			break
		}
		if time.Since(start) > 5*time.Second {
			t.Fatalf("after 5 s the output holds %q", got)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestWarningsAreWrittenAtOnceAfterTheLinesBefore(t *testing.T) {
	o := &out{}
	w := New(o)
	log := slog.New(Handler(slog.NewTextHandler(w, nil), w).WithAttrs([]slog.Attr{slog.String("part", "api")}))
	log.Info("first")
	log.Error("went wrong")
	got, _ := o.text()
	first, wrong := strings.Index(got, "msg=first"), strings.Index(got, `msg="went wrong" part=api`)
	if first < 0 || wrong < first {
		t.Fatalf("after an error the output holds %q; want the info line, then the error", got)
	}
	log.WithGroup("g").Warn("careful", "k", 1)
	if got, _ := o.text(); !strings.Contains(got, "msg=careful part=api g.k=1") {
		t.Fatalf("a warning from a group's logger was not written at once: %q", got)
	}
}

func TestALargeBacklogIsWrittenAtOnce(t *testing.T) {
	o := &out{}
	w := New(o)
	line := strings.Repeat("x", 1023) + "\n"
	for range limit / len(line) {
		w.Write([]byte(line))
	}
	if got, writes := o.text(); writes != 1 || len(got) != limit {
		t.Fatalf("after %d bytes: %d writes of %d bytes; want one of them all", limit, writes, len(got))
	}
}

func TestConcurrentLinesStayWhole(t *testing.T) {
	o := &out{}
	w := New(o)
	log := slog.New(Handler(slog.NewTextHandler(w, nil), w))
	var wg sync.WaitGroup
	for g := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 1000 {
				log.Info("request", "g", g, "i", i, "pad", strings.Repeat("p", 1+i%200))
			}
		}()
	}
	wg.Wait()
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	got, _ := o.text()
	lines := strings.Split(strings.TrimSuffix(got, "\n"), "\n")
	if len(lines) != 16*1000 {
		t.Fatalf("%d lines, want %d", len(lines), 16*1000)
	}
	seen := map[string]bool{}
	for _, l := range lines {
		var g, i int
		var pad string
		if _, err := fmt.Sscanf(l[strings.Index(l, " g="):], " g=%d i=%d pad=%s", &g, &i, &pad); err != nil || len(pad) != 1+i%200 {
			t.Fatalf("a line is not whole: %q (%v)", l, err)
		}
		seen[fmt.Sprint(g, i)] = true
	}
	if len(seen) != 16*1000 {
		t.Fatalf("%d distinct lines, want %d", len(seen), 16*1000)
	}
}

func TestFlushWithNothingWaitingWritesNothing(t *testing.T) {
	var b bytes.Buffer
	w := New(&b)
	if err := w.Flush(); err != nil || b.Len() != 0 {
		t.Fatalf("Flush on nothing: %v, wrote %q", err, b.String())
	}
}
