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

// TestFanoutKey: the fan-out pairs a receipt with its create by the summary's number,
// read from the event's bytes; anything else is no key.
func TestFanoutKey(t *testing.T) {
	ev := `{"seq":9,"type":"task.created","projectId":"p","at":"2026-11-30T10:00:00Z","data":{"id":12,"summary":"fan-out 73","status":"Todo"}}`
	if i, ok := fanoutKey([]byte(ev)); !ok || i != 73 {
		t.Errorf("fanoutKey = %d, %v; want 73, true", i, ok)
	}
	for _, raw := range []string{
		`{"seq":9,"data":{"summary":"other"}}`,
		`{"seq":9,"data":{"summary":"fan-out "}}`,
		`{"seq":9,"data":{"summary":"fan-out 7x"}}`,
		`{"seq":9,"data":{"summary":"fan-out 7`,
	} {
		if i, ok := fanoutKey([]byte(raw)); ok {
			t.Errorf("fanoutKey(%s) = %d, true; want no key", raw, i)
		}
	}
}
