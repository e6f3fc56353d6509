package service

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/mail"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/agentdesk/agentdesk/backend/audit"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/store"
)

// Questions with structure, deadlines and a person to ask (issue 40; the contract's
// "Questions with structure, deadlines and a person to ask"). The rules are all here:
// what a question may carry (Question.check), how it replaces the task's (setStatus,
// tasks.go), what answers it (answerEntry), and what its deadline does (ExpireQuestions).

// Bounds of a question's structure.
const (
	MaxOptions      = 10
	MaxOptionLen    = 100
	MaxSchemaFields = 50
	MaxSchemaLen    = 20_000
)

// Question is what a Waiting task asks beyond its text (waiting_details): the answers
// to pick from (Options) or the form an answer fills (Schema), a deadline and what
// happens then, and the person asked. It comes with the waiting details wherever they
// are accepted (status change, agent callback, GraphQL, MCP); the zero value asks
// nothing more. Any change of it is a new question (waiting_version + 1).
type Question struct {
	Options   []string        `json:"waiting_options,omitempty"`
	Schema    json.RawMessage `json:"waiting_schema,omitempty"`
	ExpiresAt *time.Time      `json:"waiting_expires_at,omitempty"`
	OnExpiry  *string         `json:"waiting_on_expiry,omitempty"` // fail (the default) or default
	Default   json.RawMessage `json:"waiting_default,omitempty"`   // the answer given at the deadline
	Ask       *string         `json:"waiting_ask,omitempty"`       // the email of the person asked
}

// What a question's deadline does.
const (
	OnExpiryFail    = "fail"
	OnExpiryDefault = "default"
)

// Given is q when it asks anything, else nil: a request without a question's fields
// leaves the task's question as it is.
func (q *Question) Given() *Question {
	if q == nil {
		return nil
	}
	if isNullJSON(q.Schema) {
		q.Schema = nil
	}
	if isNullJSON(q.Default) {
		q.Default = nil
	}
	if q.Options == nil && q.Schema == nil && q.ExpiresAt == nil && q.OnExpiry == nil && q.Default == nil && q.Ask == nil {
		return nil
	}
	return q
}

func isNullJSON(raw json.RawMessage) bool {
	return raw != nil && string(bytes.TrimSpace(raw)) == "null"
}

// checkWaiting checks the waiting details and question of a change to status, at now:
// they are for Waiting only, and the question must be well formed (check). q is
// normalized on the way (its schema and default compacted, its deadline in UTC).
func checkWaiting(status string, details *string, q *Question, now time.Time) error {
	if details != nil {
		if err := checkText("waiting_details", *details, false, MaxResponseLen); err != nil {
			return err
		}
	}
	if q == nil {
		return nil
	}
	if status != model.StatusWaiting {
		return errs.Invalid("waiting_options, waiting_schema, waiting_expires_at, waiting_on_expiry, waiting_default and waiting_ask are for status Waiting, not %s", status)
	}
	return q.check(now)
}

// check validates a question at now and normalizes it.
func (q *Question) check(now time.Time) error {
	if q.Options != nil && q.Schema != nil {
		return errs.Invalid("a question has waiting_options or waiting_schema, not both")
	}
	if q.Options != nil {
		if len(q.Options) < 1 || len(q.Options) > MaxOptions {
			return errs.Invalid("waiting_options must hold 1 to %d options, not %d", MaxOptions, len(q.Options))
		}
		for i, o := range q.Options {
			if err := checkText("waiting_options["+itoa(i)+"]", o, true, MaxOptionLen); err != nil {
				return err
			}
			if slices.Index(q.Options, o) < i {
				return errs.Invalid("waiting_options[%d] %q is there twice", i, o)
			}
		}
	}
	if q.Schema != nil {
		if len(q.Schema) > MaxSchemaLen {
			return errs.Invalid("waiting_schema is too long: %d bytes, at most %d", len(q.Schema), MaxSchemaLen)
		}
		if _, err := parseFormSchema(q.Schema); err != nil {
			return err
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, q.Schema) // parsed above: valid
		q.Schema = compact.Bytes()
	}
	if q.OnExpiry != nil && *q.OnExpiry != OnExpiryFail && *q.OnExpiry != OnExpiryDefault {
		return errs.Invalid("waiting_on_expiry %q is not valid; use fail or default", *q.OnExpiry)
	}
	if q.ExpiresAt == nil {
		if q.OnExpiry != nil || q.Default != nil {
			return errs.Invalid("waiting_on_expiry and waiting_default need waiting_expires_at, the deadline")
		}
	} else {
		if !q.ExpiresAt.After(now) {
			return errs.Invalid("waiting_expires_at %s is not in the future", q.ExpiresAt.Format(time.RFC3339))
		}
		at := q.ExpiresAt.UTC().Truncate(time.Microsecond) // as the store keeps it
		q.ExpiresAt = &at
		if q.OnExpiry == nil {
			fail := OnExpiryFail
			q.OnExpiry = &fail
		}
	}
	if q.OnExpiry != nil && *q.OnExpiry == OnExpiryDefault && q.Default == nil {
		return errs.Invalid("waiting_on_expiry default needs waiting_default, the answer to give")
	}
	if q.Default != nil {
		if q.OnExpiry == nil || *q.OnExpiry != OnExpiryDefault {
			return errs.Invalid("waiting_default is given at the deadline only with waiting_on_expiry default")
		}
		in, err := q.defaultAnswer()
		if err != nil {
			return err
		}
		var t model.Task
		q.applyTo(&t)
		if _, err := answerEntry(&t, in); err != nil {
			return errs.Invalid("waiting_default is not an answer to the question: %v", err)
		}
		var compact bytes.Buffer
		_ = json.Compact(&compact, q.Default)
		q.Default = compact.Bytes()
	}
	if q.Ask != nil {
		a, err := mail.ParseAddress(*q.Ask)
		if err != nil || a.Name != "" || a.Address != strings.TrimSpace(*q.Ask) {
			return errs.Invalid("waiting_ask %q is not an email address", *q.Ask)
		}
		email := strings.ToLower(a.Address)
		q.Ask = &email
	}
	return nil
}

// defaultAnswer is the answer waiting_default gives: a choice among the options, the
// form's data, or text.
func (q *Question) defaultAnswer() (RespondInput, error) {
	switch {
	case q.Schema != nil:
		var data map[string]any
		if err := unmarshalNumbers(q.Default, &data); err != nil || data == nil {
			return RespondInput{}, errs.Invalid("waiting_default must be an object of the form's fields")
		}
		return RespondInput{Data: data}, nil
	default:
		var s string
		if err := json.Unmarshal(q.Default, &s); err != nil {
			return RespondInput{}, errs.Invalid("waiting_default must be a string: one of the options, or the text of the answer")
		}
		if q.Options != nil {
			return RespondInput{Choice: &s}, nil
		}
		return RespondInput{Response: s}, nil
	}
}

// applyTo makes q (nil: no structure) the task's question's structure.
func (q *Question) applyTo(t *model.Task) {
	if q == nil {
		q = &Question{}
	}
	t.WaitingOptions, t.WaitingSchema, t.WaitingExpiresAt = q.Options, q.Schema, q.ExpiresAt
	t.WaitingOnExpiry, t.WaitingDefault, t.WaitingAsk = q.OnExpiry, q.Default, q.Ask
}

// sameAs says whether q (nil: no structure) is the task's question's structure.
func (q *Question) sameAs(t *model.Task) bool {
	var now model.Task
	q.applyTo(&now)
	a, _ := json.Marshal(questionOf(&now))
	b, _ := json.Marshal(questionOf(t))
	return bytes.Equal(a, b)
}

// questionOf is the task's question's structure.
func questionOf(t *model.Task) Question {
	return Question{Options: t.WaitingOptions, Schema: t.WaitingSchema, ExpiresAt: t.WaitingExpiresAt,
		OnExpiry: t.WaitingOnExpiry, Default: t.WaitingDefault, Ask: t.WaitingAsk}
}

// checkRespondInput checks that an answer is given one way: text, a choice or data.
func (in *RespondInput) check() error {
	given := 0
	for _, ok := range []bool{in.Response != "", in.Choice != nil, in.Data != nil} {
		if ok {
			given++
		}
	}
	switch {
	case given == 0:
		return errs.Invalid("response is required: give response (text), choice (one of waiting_options) or data (the fields of waiting_schema)")
	case given > 1:
		return errs.Invalid("give one of response, choice and data, not several")
	case in.Response != "":
		return checkText("response", in.Response, true, MaxResponseLen)
	case in.Choice != nil:
		return checkText("choice", *in.Choice, true, MaxOptionLen)
	}
	return nil
}

// answerEntry checks an answer (checked by check) against the task's question and
// makes its conversation entry: content readable, data the form's object (null for
// text and a choice). Text answers any question (a person may answer "neither").
func answerEntry(t *model.Task, in RespondInput) (model.TaskMessage, error) {
	entry := model.TaskMessage{Role: model.RoleUser, Content: in.Response}
	if t.WaitingDetails != nil {
		entry.Question = *t.WaitingDetails // the thread shows it above the answer
	}
	switch {
	case in.Choice != nil:
		if !slices.Contains(t.WaitingOptions, *in.Choice) {
			if t.WaitingOptions == nil {
				return entry, errs.Invalid("choice answers a question with waiting_options; task %d's has none: send response", t.ID)
			}
			return entry, errs.Invalid("choice %q is not one of the options: %s", *in.Choice, strings.Join(t.WaitingOptions, ", "))
		}
		entry.Content = *in.Choice
	case in.Data != nil:
		if t.WaitingSchema == nil {
			return entry, errs.Invalid("data answers a question with waiting_schema; task %d's has none: send response", t.ID)
		}
		form, err := parseFormSchema(t.WaitingSchema)
		if err != nil {
			return entry, internal("read the question's schema", err)
		}
		if err := form.check(in.Data); err != nil {
			return entry, err
		}
		entry.Content = form.readable(in.Data)
		if entry.Data, err = json.Marshal(in.Data); err != nil {
			return entry, errs.Invalid("data: %v", err)
		}
	}
	return entry, nil
}

// formSchema is a question's form: an object schema whose fields are strings, numbers,
// integers or booleans, the subset MCP elicitation allows.
type formSchema struct {
	fields   []formField // in the schema's order
	required []string
}

type formField struct {
	name, title, typ, format string
	enum                     []string
	minLength, maxLength     *int
	minimum, maximum         *float64
}

// Keys each part of a schema may have.
var (
	schemaKeys = []string{"$schema", "type", "properties", "required", "title", "description"}
	fieldKeys  = map[string][]string{
		"string":  {"type", "title", "description", "default", "enum", "enumNames", "format", "minLength", "maxLength"},
		"number":  {"type", "title", "description", "default", "minimum", "maximum"},
		"integer": {"type", "title", "description", "default", "minimum", "maximum"},
		"boolean": {"type", "title", "description", "default"},
	}
	stringFormats = []string{"email", "uri", "date", "date-time"}
)

// parseFormSchema reads a schema, or says which part of it is wrong (a 400).
func parseFormSchema(raw json.RawMessage) (*formSchema, error) {
	bad := func(part, format string, args ...any) error {
		return errs.Invalid("%s "+format, append([]any{"waiting_schema" + part}, args...)...)
	}
	top, order, err := objectOf(raw)
	if err != nil {
		return nil, bad("", "must be a JSON object")
	}
	for _, k := range order {
		if !slices.Contains(schemaKeys, k) {
			return nil, bad("."+k, "is not allowed; a schema has type, properties, required, title and description")
		}
	}
	if string(top["type"]) != `"object"` {
		return nil, bad(".type", `must be "object"`)
	}
	for _, k := range []string{"title", "description"} {
		if v, ok := top[k]; ok && !isJSONString(v) {
			return nil, bad("."+k, "must be a string")
		}
	}
	props, names, err := objectOf(top["properties"])
	if err != nil || len(names) == 0 {
		return nil, bad(".properties", "must be an object of 1 to %d fields", MaxSchemaFields)
	}
	if len(names) > MaxSchemaFields {
		return nil, bad(".properties", "has %d fields, at most %d", len(names), MaxSchemaFields)
	}
	form := &formSchema{}
	for _, name := range names {
		f, err := parseFormField(name, props[name])
		if err != nil {
			return nil, err
		}
		form.fields = append(form.fields, f)
	}
	if r, ok := top["required"]; ok {
		if err := json.Unmarshal(r, &form.required); err != nil {
			return nil, bad(".required", "must be an array of field names")
		}
		for i, name := range form.required {
			if _, ok := props[name]; !ok {
				return nil, bad(".required["+itoa(i)+"]", "%q is not a field of properties", name)
			}
		}
	}
	return form, nil
}

func parseFormField(name string, raw json.RawMessage) (formField, error) {
	part := "waiting_schema.properties." + name
	bad := func(key, format string, args ...any) error {
		if key != "" {
			key = "." + key
		}
		return errs.Invalid("%s "+format, append([]any{part + key}, args...)...)
	}
	f := formField{name: name, title: name}
	if name == "" || utf8.RuneCountInString(name) > MaxOptionLen {
		return f, errs.Invalid("waiting_schema.properties: a field's name must be 1 to %d characters", MaxOptionLen)
	}
	p, keys, err := objectOf(raw)
	if err != nil {
		return f, bad("", "must be an object")
	}
	if json.Unmarshal(p["type"], &f.typ) != nil || fieldKeys[f.typ] == nil {
		return f, bad("type", "must be string, number, integer or boolean")
	}
	for _, k := range keys {
		if !slices.Contains(fieldKeys[f.typ], k) {
			return f, bad(k, "is not allowed in a %s field; it may have %s", f.typ, strings.Join(fieldKeys[f.typ], ", "))
		}
	}
	for _, k := range []string{"title", "description"} {
		if v, ok := p[k]; ok && !isJSONString(v) {
			return f, bad(k, "must be a string")
		}
	}
	if v, ok := p["title"]; ok {
		_ = json.Unmarshal(v, &f.title)
	}
	if v, ok := p["format"]; ok {
		if json.Unmarshal(v, &f.format) != nil || !slices.Contains(stringFormats, f.format) {
			return f, bad("format", "must be one of %s", strings.Join(stringFormats, ", "))
		}
	}
	if v, ok := p["enum"]; ok {
		if json.Unmarshal(v, &f.enum) != nil || len(f.enum) == 0 {
			return f, bad("enum", "must be a non-empty array of strings")
		}
	}
	if v, ok := p["enumNames"]; ok {
		var names []string
		if json.Unmarshal(v, &names) != nil || len(names) != len(f.enum) {
			return f, bad("enumNames", "must be an array of strings, one for each of enum")
		}
	}
	for key, dst := range map[string]**int{"minLength": &f.minLength, "maxLength": &f.maxLength} {
		if v, ok := p[key]; ok {
			var n int
			if json.Unmarshal(v, &n) != nil || n < 0 {
				return f, bad(key, "must be a whole number, 0 or more")
			}
			*dst = &n
		}
	}
	for key, dst := range map[string]**float64{"minimum": &f.minimum, "maximum": &f.maximum} {
		if v, ok := p[key]; ok {
			var n float64
			if json.Unmarshal(v, &n) != nil {
				return f, bad(key, "must be a number")
			}
			*dst = &n
		}
	}
	if v, ok := p["default"]; ok {
		var value any
		if unmarshalNumbers(v, &value) != nil {
			return f, bad("default", "must be JSON")
		}
		if msg := f.problem(value); msg != "" {
			return f, bad("default", "%s", msg)
		}
	}
	return f, nil
}

// check validates data against the form: 400 naming each failing field.
func (s *formSchema) check(data map[string]any) error {
	var problems []string
	for _, name := range s.required {
		if v, ok := data[name]; !ok || v == nil || v == "" {
			problems = append(problems, name+" is required")
		}
	}
	for _, name := range slices.Sorted(mapKeys(data)) {
		i := slices.IndexFunc(s.fields, func(f formField) bool { return f.name == name })
		if i < 0 {
			problems = append(problems, name+" is not a field of the form")
			continue
		}
		if v := data[name]; v != nil && !(v == "" && slices.Contains(s.required, name)) {
			if msg := s.fields[i].problem(v); msg != "" {
				problems = append(problems, name+" "+msg)
			}
		}
	}
	if len(problems) > 0 {
		return errs.Invalid("data does not fill the form: %s", strings.Join(problems, "; "))
	}
	return nil
}

// problem says what is wrong with a value of the field, or "".
func (f formField) problem(v any) string {
	switch f.typ {
	case "string":
		s, ok := v.(string)
		if !ok {
			return "must be a string"
		}
		n := utf8.RuneCountInString(s)
		switch {
		case f.minLength != nil && n < *f.minLength:
			return fmt.Sprintf("must be at least %d characters", *f.minLength)
		case f.maxLength != nil && n > *f.maxLength:
			return fmt.Sprintf("must be at most %d characters", *f.maxLength)
		case n > MaxResponseLen:
			return fmt.Sprintf("must be at most %d characters", MaxResponseLen)
		case f.enum != nil && !slices.Contains(f.enum, s):
			return "must be one of " + strings.Join(f.enum, ", ")
		}
		return formatProblem(f.format, s)
	case "number", "integer":
		n, ok := number(v)
		if !ok {
			return "must be a number"
		}
		switch {
		case f.typ == "integer" && n != math.Trunc(n):
			return "must be a whole number"
		case f.minimum != nil && n < *f.minimum:
			return "must be at least " + strconv.FormatFloat(*f.minimum, 'g', -1, 64)
		case f.maximum != nil && n > *f.maximum:
			return "must be at most " + strconv.FormatFloat(*f.maximum, 'g', -1, 64)
		}
	case "boolean":
		if _, ok := v.(bool); !ok {
			return "must be true or false"
		}
	}
	return ""
}

func formatProblem(format, s string) string {
	switch format {
	case "email":
		if a, err := mail.ParseAddress(s); err != nil || a.Address != s {
			return "must be an email address"
		}
	case "uri":
		if u, err := url.Parse(s); err != nil || u.Scheme == "" || (u.Host == "" && u.Opaque == "") {
			return "must be an absolute URI"
		}
	case "date":
		if _, err := time.Parse(time.DateOnly, s); err != nil {
			return "must be a date, YYYY-MM-DD"
		}
	case "date-time":
		if _, err := time.Parse(time.RFC3339, s); err != nil {
			return "must be a date and time in RFC 3339"
		}
	}
	return ""
}

// readable writes data as text, a line per field given in the form's order: "Title: value".
func (s *formSchema) readable(data map[string]any) string {
	var lines []string
	for _, f := range s.fields {
		v, ok := data[f.name]
		if !ok || v == nil {
			continue
		}
		var text string
		switch v := v.(type) {
		case string:
			text = v
		case bool:
			text = map[bool]string{true: "yes", false: "no"}[v]
		default:
			b, _ := json.Marshal(v)
			text = string(b)
		}
		lines = append(lines, f.title+": "+text)
	}
	return strings.Join(lines, "\n")
}

// number reads a JSON number as decoded (float64, json.Number or a Go integer).
func number(v any) (float64, bool) {
	switch n := v.(type) {
	case float64:
		return n, true
	case json.Number:
		f, err := n.Float64()
		return f, err == nil
	case int:
		return float64(n), true
	case int64:
		return float64(n), true
	}
	return 0, false
}

// objectOf reads a JSON object, with its keys in order.
func objectOf(raw json.RawMessage) (map[string]json.RawMessage, []string, error) {
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil || m == nil {
		return nil, nil, errors.New("not an object")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	_, _ = dec.Token() // {
	var keys []string
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, nil, err
		}
		keys = append(keys, tok.(string))
		var skip json.RawMessage
		if err := dec.Decode(&skip); err != nil {
			return nil, nil, err
		}
	}
	return m, keys, nil
}

func isJSONString(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil
}

func unmarshalNumbers(raw json.RawMessage, v any) error {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	return dec.Decode(v)
}

func mapKeys(m map[string]any) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// Unanswered is the entry a question whose deadline passed with waiting_on_expiry fail
// leaves in the conversation.
const unansweredEntry = "Nobody answered by the deadline (%s): the task failed."

// TimeoutAuthor is the author of what a question's deadline does.
const TimeoutAuthor = "timeout"

// ExpireQuestions does what the deadlines that have come say, each once: fail the
// task, or answer with waiting_default. The background runner calls it every second;
// every server may, at once: the write re-reads the task, under its project's lock on
// PostgreSQL, and does nothing if the question was answered or changed meanwhile.
func (s *Service) ExpireQuestions(ctx context.Context) error {
	now := s.clock()
	due, err := s.store.Read().DueQuestions(ctx, now, 100)
	if err != nil {
		return internal("list due questions", err)
	}
	var errList []error
	for _, d := range due {
		by := store.Author{Project: d.ProjectID, Actor: audit.Actor{Kind: audit.KindSystem, Name: TimeoutAuthor, Via: audit.ViaJob}}
		errList = append(errList, s.store.Write(ctx, by, func(tx *store.Tx) error {
			return s.expireQuestion(ctx, tx, d, now)
		}))
	}
	return errors.Join(errList...)
}

func (s *Service) expireQuestion(ctx context.Context, tx *store.Tx, d store.DueQuestion, now time.Time) error {
	t, err := tx.Task(ctx, d.ProjectID, d.TaskID, true)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return internal("load task", err)
	}
	if t.Status != model.StatusWaiting || t.WaitingExpiresAt == nil || t.WaitingExpiresAt.After(now) {
		return nil // answered, changed or moved on since it was listed
	}
	q := questionOf(t)
	if *t.WaitingOnExpiry == OnExpiryDefault {
		in, err := q.defaultAnswer()
		if err != nil {
			return err
		}
		entry, err := answerEntry(t, in)
		if err != nil {
			return err
		}
		if err := s.queueRemoteAnswer(ctx, tx, t, entry.Content, now); err != nil { // a2aremote.go
			return err
		}
		setStatus(t, model.StatusDoing, nil, nil)
		_, err = s.saveTask(ctx, tx, t, []model.TaskMessage{entry}, now)
		return err
	}
	entry := model.TaskMessage{Role: model.RoleUser, Content: fmt.Sprintf(unansweredEntry, t.WaitingExpiresAt.Format(time.RFC3339))}
	if t.WaitingDetails != nil {
		entry.Question = *t.WaitingDetails
	}
	setStatus(t, model.StatusFailed, nil, nil)
	_, err = s.saveTask(ctx, tx, t, []model.TaskMessage{entry}, now)
	return err
}
