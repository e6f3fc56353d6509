package api

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

// TestKeysAsSpelt: the bytes-only check lets a body skip the rewrite only when
// encoding/json would decode it exactly as the rewrite does (every body decodes the same
// both ways), and lets the usual bodies skip it (the rewrite costs several times the
// decode: about 25 µs of the server's CPU per create when every body took it).
func TestKeysAsSpelt(t *testing.T) {
	rewritten := func(body string, v any) (any, error) {
		canonical, err := canonicalKeys(json.RawMessage(body), reflect.TypeOf(v), "")
		if err != nil {
			return nil, err
		}
		err = json.Unmarshal(canonical, v)
		return v, err
	}
	for _, c := range []struct {
		body string
		fast bool // the rewrite is skipped
	}{
		{`{"summary":"Deploy the site","details":"Build it.\nThen \"Status\": check.","agent_id":3,"steps":[{"title":"Build"}]}`, true},
		{`{"summary":"Café, naïve, 東京 🚀","taskType":"review","required_skills":["go"]}`, true},
		{`{"summary":"a","Summary":"b"}`, false},
		{`{"summary":"a","SUMMARY":"b","steps":[{"TITLE":"x"}]}`, false},
		{`{"summary":"a","agentId":3}`, false},
		{`{"summary":"a","AgentID":3}`, false},
		{`{"summary":"a","\u0053ummary":"b"}`, false},
		{`{"summary":"a","ſummary":"b"}`, false},
		{`{"summary":"a","TASKTYPE":"x","tasktype":"y"}`, false},
		{`{"summary":"the field \"SUMMARY\" is named in this text"}`, true},
		{`{"summary":"\"summary\":\"x\""}`, true},
	} {
		got := keysAsSpelt([]byte(c.body), reflect.TypeFor[*service.CreateTaskInput]())
		if got != c.fast {
			t.Errorf("keysAsSpelt(%s) = %v, want %v", c.body, got, c.fast)
		}
		var direct service.CreateTaskInput
		err := decodeJSON([]byte(c.body), &direct, false)
		want, wantErr := rewritten(c.body, &service.CreateTaskInput{})
		if (err == nil) != (wantErr == nil) || err == nil && !reflect.DeepEqual(&direct, want) {
			t.Errorf("%s: decodeJSON gave %+v (%v), the rewrite %+v (%v)", c.body, direct, err, want, wantErr)
		}
	}
	// A name longer than keysAsSpelt's buffer: its type always takes the rewrite.
	type long struct {
		Name string `json:"a_name_of_seventy_letters_is_longer_than_any_field_has_but_it_could_be"`
	}
	if keysAsSpelt([]byte(`{"A_NAME_OF_SEVENTY_LETTERS_IS_LONGER_THAN_ANY_FIELD_HAS_BUT_IT_COULD_BE":"x"}`), reflect.TypeFor[*long]()) {
		t.Error("keysAsSpelt let a long name in another case skip the rewrite")
	}
	var status StatusBody
	if !keysAsSpelt([]byte(`{"status":"Done","waiting_details":"x"}`), reflect.TypeOf(&status)) ||
		keysAsSpelt([]byte(`{"status":"Done","STATUS":"Failed"}`), reflect.TypeOf(&status)) ||
		keysAsSpelt([]byte(`{"status":"Waiting","waitingDetails":"x"}`), reflect.TypeOf(&status)) {
		t.Error("keysAsSpelt on a status body")
	}
}

// TestDecodeJSONErrors: a body that is not one JSON object gets a 400 that says what is
// wrong, from the one pass of encoding/json (decodeJSON).
func TestDecodeJSONErrors(t *testing.T) {
	for body, want := range map[string]string{
		`{"summary":"a"} {"summary":"b"}`: "the request body must hold one JSON object and nothing after it",
		`{"summary":"a"}]`:                "the request body must hold one JSON object and nothing after it",
		`{"summary":"a"`:                  "malformed JSON: the body ends too early",
		`{"summary":"a",}`:                "malformed JSON at byte 16: invalid character '}' looking for beginning of object key string",
		`{"summary":3}`:                   "field summary must be a string, not number",
		`null`:                            "the request body must be a JSON object, not null",
		` `:                               "the request body must be a JSON object",
	} {
		var in service.CreateTaskInput
		err := decodeJSON([]byte(body), &in, false)
		if code, msg := errs.Public(err); code != errs.InvalidArgument || msg != want {
			t.Errorf("%s: %s %q, want %q", body, code, msg, want)
		}
	}
}

// BenchmarkDecodeCreateTask decodes make bench's create body (backend/bench/load.go).
func BenchmarkDecodeCreateTask(b *testing.B) {
	body := []byte(`{"summary":"benchmark task 1","details":"created by the load benchmark to measure the create path","steps":[{"title":"read the issue"},{"title":"write the fix"},{"title":"run the tests"}],"agent_id":7}`)
	for b.Loop() {
		var in service.CreateTaskInput
		if err := decodeJSON(body, &in, false); err != nil {
			b.Fatal(err)
		}
	}
}

// FuzzKeysAsSpelt: whenever keysAsSpelt lets a body skip the rewrite, decoding it as is
// gives what decoding the rewrite gives.
func FuzzKeysAsSpelt(f *testing.F) {
	for _, seed := range []string{
		`{"summary":"s","details":"d","steps":[{"title":"a"}],"agent_id":1}`,
		`{"summary":"a","Summary":"b"}`, `{"SUMMARY":"x"}`, `{"summary":"a","agentId":3}`,
		`{"summary":"\"SUMMARY\""}`, `{"summary":"a","steps":[{"TITLE":"x"}]}`, `{"summary":"a\\","Summary":"b"}`,
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		typ := reflect.TypeFor[*service.CreateTaskInput]()
		if !keysAsSpelt(body, typ) {
			return
		}
		canonical, err := canonicalKeys(body, typ, "")
		if err != nil {
			t.Fatalf("keysAsSpelt passed %q, which canonicalKeys refuses: %v", body, err)
		}
		var direct, rewritten service.CreateTaskInput
		errDirect, errRewritten := json.Unmarshal(body, &direct), json.Unmarshal(canonical, &rewritten)
		if (errDirect == nil) != (errRewritten == nil) || errDirect == nil && !reflect.DeepEqual(direct, rewritten) {
			t.Fatalf("%q: as is %+v (%v), rewritten %+v (%v)", body, direct, errDirect, rewritten, errRewritten)
		}
	})
}
