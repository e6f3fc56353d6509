package model

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// reflectTask is Task without its methods: encoding/json encodes it by reflection
// whatever methods Task may gain.
type reflectTask Task

func checkTaskJSON(t *testing.T, task Task) {
	t.Helper()
	want, wantErr := json.Marshal(reflectTask(task))
	got, err := task.AppendJSON(nil)
	if (err != nil) != (wantErr != nil) {
		t.Fatalf("AppendJSON error %v, encoding/json error %v, for %+v", err, wantErr, task)
	}
	if err != nil {
		return
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("AppendJSON differs from encoding/json\n got %s\nwant %s", got, want)
	}
}

var trickyStrings = []string{
	"", "plain", `quote " and backslash \`, "<script>&</script>", "tab\tnew\nline\rcr\bbs\fff",
	"\x00\x01\x1f\x7f", "é ü 日本 🚀", "line\u2028sep\u2029para", "bad \xff utf8 \xe2\x82", "\xed\xa0\x80 surrogate",
}

func TestTaskJSONMatches(t *testing.T) {
	ten := int64(10)
	waiting := "Which tone?"
	at := time.Date(2026, 11, 23, 18, 28, 8, 638388000, time.UTC)
	base := Task{ID: 1, ProjectID: "prj_x", AgentID: &ten, AgentName: "worker", Summary: "s", Details: "d",
		Steps: []Step{{ID: 1000, Title: "a", Status: StepPending}}, Status: StatusWaiting, Source: SourceUser, TaskType: DefaultTaskType,
		RequiredSkills: []string{"go", "sql"}, CurrentStepNum: 0, IsWaiting: true, WaitingDetails: &waiting, WaitingVersion: 3,
		CreatedAt: at, UpdatedAt: at.Add(time.Second)}
	checkTaskJSON(t, base)
	checkTaskJSON(t, Task{}) // nil slices and pointers, zero times

	withConversation := base
	withConversation.Conversation = []TaskMessage{{Role: RoleUser, Content: "hi <b>", CreatedAt: at, Author: "Dana <\"D\">"}, {Role: RoleAssistant, Content: "", CreatedAt: time.Time{}}, {Role: RoleUser, Content: "yes", CreatedAt: at, Question: "Ship it \"now\"?"}}
	checkTaskJSON(t, withConversation)
	emptyConversation := base
	emptyConversation.Conversation, emptyConversation.Steps, emptyConversation.RequiredSkills = []TaskMessage{}, []Step{}, []string{}
	emptyConversation.ConversationID, emptyConversation.BlockedReason = &ten, "budget & spent"
	checkTaskJSON(t, emptyConversation)

	question := withConversation
	onExpiry, ask := "default", "dana@example.com"
	question.WaitingOptions, question.WaitingExpiresAt, question.WaitingOnExpiry, question.WaitingAsk = []string{"Approve", "<Reject>"}, &at, &onExpiry, &ask
	question.WaitingSchema = json.RawMessage(`{ "type": "object", "properties": {"n": {"type": "string", "description": "a <b>"}} }`)
	question.WaitingDefault = json.RawMessage(`"Approve"`)
	question.Conversation = append(question.Conversation, TaskMessage{Role: RoleUser, Content: "n: x", CreatedAt: at, Data: json.RawMessage(`{"n": "x & y"}`)})
	checkTaskJSON(t, question)

	zoned := base
	zoned.CreatedAt = at.In(time.FixedZone("", 5*3600+30*60))
	zoned.UpdatedAt = time.Date(2026, 1, 1, 0, 0, 0, 0, time.FixedZone("", -8*3600))
	checkTaskJSON(t, zoned)
	badYear := base
	badYear.UpdatedAt = time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)
	checkTaskJSON(t, badYear) // both refuse it

	for _, s := range trickyStrings {
		task := base
		task.Summary, task.Details, task.AgentName, task.ProjectID = s, s+s, s, s
		task.Steps = []Step{{ID: 1, Title: s, Status: s}}
		task.RequiredSkills = []string{s}
		task.WaitingDetails = &s
		task.Conversation = []TaskMessage{{Role: s, Content: s, CreatedAt: at}}
		task.BlockedReason = s
		checkTaskJSON(t, task)
	}

	// Random strings of every byte value, and random shapes.
	rng := rand.New(rand.NewPCG(1, 2))
	randomString := func() string {
		b := make([]byte, rng.IntN(12))
		for i := range b {
			if rng.IntN(3) == 0 {
				b[i] = byte(rng.IntN(256))
			} else {
				b[i] = "a<>&\"\\\n\x00é\u2028"[rng.IntN(13)]
			}
		}
		return string(b)
	}
	for range 2000 {
		task := base
		task.ID, task.WaitingVersion, task.CurrentStepNum = rng.Int64()-rng.Int64(), rng.Int64N(1<<40), rng.IntN(600)
		task.Summary, task.Details, task.Status = randomString(), randomString(), randomString()
		task.Steps = nil
		for range rng.IntN(4) {
			task.Steps = append(task.Steps, Step{ID: rng.Int64(), Title: randomString(), Status: randomString()})
		}
		if rng.IntN(2) == 0 {
			task.AgentID, task.WaitingDetails = nil, nil
		}
		task.IsActive, task.IsWaiting = rng.IntN(2) == 0, rng.IntN(2) == 0
		task.CreatedAt = time.Unix(rng.Int64N(1<<35), rng.Int64N(1e9)).UTC()
		checkTaskJSON(t, task)
	}
}

// FuzzTaskJSON explores the strings; its seed corpus runs with the tests.
func FuzzTaskJSON(f *testing.F) {
	for _, s := range trickyStrings {
		f.Add(s, s, int64(7))
	}
	f.Fuzz(func(t *testing.T, summary, title string, id int64) {
		waiting := title + summary
		checkTaskJSON(t, Task{ID: id, Summary: summary, Details: title, WaitingDetails: &waiting,
			Steps: []Step{{ID: id, Title: title, Status: summary}}, Conversation: []TaskMessage{{Content: summary}}})
	})
}

// TestTaskEventJSON: a task event's data is the task's fields without its conversation,
// plus "appended", the entries the change added (an empty array when none).
func TestTaskEventJSON(t *testing.T) {
	at := time.Date(2026, 11, 23, 18, 28, 8, 638388000, time.UTC)
	entries := []TaskMessage{{Role: RoleUser, Content: "first", CreatedAt: at, Author: "Dana"}, {Role: RoleUser, Content: "yes <b>", CreatedAt: at, Author: "Dana", Question: "Ship?"}}
	task := Task{ID: 7, ProjectID: "prj_x", Summary: "s", Steps: []Step{}, Conversation: entries, Status: StatusDoing, CreatedAt: at, UpdatedAt: at}
	for _, appended := range [][]TaskMessage{entries[1:], nil} {
		got, err := TaskEvent{Task: &task, Appended: appended}.AppendJSON(nil)
		if err != nil {
			t.Fatal(err)
		}
		var fields map[string]json.RawMessage
		if err := json.Unmarshal(got, &fields); err != nil {
			t.Fatalf("not JSON: %v\n%s", err, got)
		}
		if _, ok := fields["conversation"]; ok {
			t.Errorf("the event carries the conversation: %s", got)
		}
		wantAppended, _ := json.Marshal(append([]TaskMessage{}, appended...))
		if !bytes.Equal(fields["appended"], wantAppended) {
			t.Errorf("appended %s, want %s", fields["appended"], wantAppended)
		}
		delete(fields, "appended")
		withoutConversation := task
		withoutConversation.Conversation = nil
		var want map[string]json.RawMessage
		raw, _ := json.Marshal(reflectTask(withoutConversation))
		json.Unmarshal(raw, &want)
		if g, w := len(fields), len(want); g != w {
			t.Errorf("%d task fields, want %d: %s", g, w, got)
		}
		for k, v := range want {
			if !bytes.Equal(fields[k], v) {
				t.Errorf("%s: %s, want %s", k, fields[k], v)
			}
		}
	}
	if len(task.Conversation) != 2 {
		t.Errorf("encoding the event changed the task's conversation: %+v", task.Conversation)
	}
}
