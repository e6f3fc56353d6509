package api_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestTaskEventsStaySmall: the contract's "Events stay small". After n comments of size
// bytes each, every task event is at most its own new content plus the task's own
// fields, so the log grows linearly: the events carry the task without its
// conversation, and the entries the change added as data.appended. The frames are read
// with ?since=, which replays the stored rows: what the events table holds is what is
// measured, and what every socket and webhook is sent.
func TestTaskEventsStaySmall(t *testing.T) { pgtest.Engines(t, testTaskEventsStaySmall) }

func testTaskEventsStaySmall(t *testing.T, engine string) {
	const n, size = 20, 20_000
	f := newFixture(t, engine)
	id := f.create(t, f.rw, `{"summary":"a long thread","details":"with many comments"}`).ID
	comment := func(i int) string { return fmt.Sprintf("%02d %s", i, strings.Repeat("x", size-3)) }
	for i := range n {
		r := f.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/comments", id), Token: f.rw,
			Body: `{"content":"` + comment(i) + `"}`})
		if r.Status != http.StatusOK {
			t.Fatalf("comment %d: %d %s", i, r.Status, r.Body)
		}
	}
	f.put(t, fmt.Sprintf("/api/tasks/%d/status", id), `{"status":"Waiting","waiting_details":"Ship it?"}`, http.StatusOK)
	if r := f.env.Do(t, testenv.Request{Method: "POST", Path: fmt.Sprintf("/api/tasks/%d/respond", id), Token: f.rw,
		Body: `{"response":"yes"}`}); r.Status != http.StatusOK {
		t.Fatalf("respond: %d %s", r.Status, r.Body)
	}

	// The task's events, in order: created, n comments, Waiting, the answer.
	conn := dial(t, f.env, "?since=0", bearer(f.rw))
	type frame struct {
		size     int
		typ      string
		fields   map[string]json.RawMessage
		appended []model.TaskMessage
	}
	var frames []frame
	for len(frames) < n+3 {
		conn.SetReadDeadline(time.Now().Add(10 * time.Second))
		_, raw, err := conn.ReadMessage()
		if err != nil {
			t.Fatalf("read event %d of the task: %v", len(frames), err)
		}
		var e streamEvent
		var fr frame
		if err := json.Unmarshal(raw, &e); err != nil || json.Unmarshal(e.Data, &fr.fields) != nil {
			t.Fatalf("event %s: %v", raw, err)
		}
		if !strings.HasPrefix(e.Type, "task.") || string(fr.fields["id"]) != fmt.Sprint(id) {
			continue // the fixture's events
		}
		if _, ok := fr.fields["conversation"]; ok {
			t.Errorf("%s (seq %d) carries the conversation", e.Type, e.Seq)
		}
		if err := json.Unmarshal(fr.fields["appended"], &fr.appended); err != nil || fr.appended == nil {
			t.Errorf("%s (seq %d): appended %s, want an array (%v)", e.Type, e.Seq, fr.fields["appended"], err)
		}
		fr.size, fr.typ = len(raw), e.Type
		frames = append(frames, fr)
	}

	created := frames[0]
	if created.typ != "task.created" || len(created.appended) != 0 {
		t.Errorf("first event %s with %d appended, want task.created with none", created.typ, len(created.appended))
	}
	// The task's own fields are the created event; a comment adds its entry: the text
	// and the entry's role, time and author (under 200 bytes).
	limit := created.size + size + 200
	total := 0
	for i, fr := range frames[1 : n+1] {
		total += fr.size
		if fr.size > limit {
			t.Errorf("comment %d: a frame of %d bytes, more than the task (%d) and the comment (%d)", i, fr.size, created.size, size)
		}
		if len(fr.appended) != 1 || fr.appended[0].Content != comment(i) || fr.appended[0].Role != model.RoleUser {
			t.Errorf("comment %d: appended %d entries, want the comment", i, len(fr.appended))
		}
	}
	if total > n*limit {
		t.Errorf("%d comments of %d bytes took %d bytes of events, want at most %d", n, size, total, n*limit)
	}
	if waiting := frames[n+1]; len(waiting.appended) != 0 || waiting.size > created.size+100 {
		t.Errorf("the move to Waiting: %d bytes with %d appended, want about the task's %d and none", waiting.size, len(waiting.appended), created.size)
	}
	answer := frames[n+2]
	if len(answer.appended) != 1 || answer.appended[0].Content != "yes" || answer.appended[0].Question != "Ship it?" {
		t.Errorf("the answer's event appended %+v, want the answer with its question", answer.appended)
	}
	t.Logf("%s: %d comments of %d bytes: %d bytes of events, the last %d", engine, n, size, total, frames[n].size)
}
