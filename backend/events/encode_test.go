package events

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
)

// TestAppendEvent: the replay's encoding is the same JSON value as json.Marshal's.
func TestAppendEvent(t *testing.T) {
	at := time.Date(2026, 11, 24, 3, 4, 5, 123456000, time.UTC)
	for _, e := range []model.Event{
		{Seq: 1, Type: "task.created", ProjectID: "prj_abc", At: at, Data: json.RawMessage(`{"summary":"<b>&</b> é \u2028 \"q\"","steps":[1,2]}`)},
		{Seq: 42, Type: "task.deleted", ProjectID: "prj_abc", At: at.Truncate(time.Second), Data: json.RawMessage(`{"id":7}`)},
		{Seq: 3, Type: "odd\"type", ProjectID: "prj_é", At: at, Data: json.RawMessage(`[]`)},
		{Seq: 4, Type: "stream.reset", ProjectID: "prj_abc", At: at, Data: map[string]any{"seq": 3}},
		{Seq: 5, Type: "task.updated", ProjectID: "prj_abc", At: at, Data: json.RawMessage(nil)},
	} {
		want, err := json.Marshal(e)
		if err != nil {
			t.Fatal(err)
		}
		got := appendEvent(nil, e)
		var a, b any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("not JSON: %s: %v", got, err)
		}
		if err := json.Unmarshal(want, &b); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("appendEvent\n got %s\nwant %s", got, want)
		}
	}
}
