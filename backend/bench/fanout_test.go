package main

import (
	"testing"
	"time"
)

// TestEventAt: the fan-out reads an event's own "at", not one inside its data.
func TestEventAt(t *testing.T) {
	at, ok := eventAt([]byte(`{"seq":7,"type":"task.created","projectId":"p","at":"2026-11-29T10:00:00.123456789Z","data":{"at":"1999-01-01T00:00:00Z"}}`))
	if want := time.Date(2026, 11, 29, 10, 0, 0, 123456789, time.UTC); !ok || !at.Equal(want) {
		t.Errorf("eventAt = %v, %v; want %v", at, ok, want)
	}
	if _, ok := eventAt([]byte(`{"seq":7}`)); ok {
		t.Error("an event without at: ok")
	}
}
