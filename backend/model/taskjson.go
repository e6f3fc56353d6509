package model

import (
	"encoding/json"
	"errors"
	"strconv"
	"time"
	"unicode/utf8"
)

// Tasks are encoded on every write (the event that carries the task, in the single
// writer), in almost every answer and in every list. AppendJSON writes the bytes
// encoding/json writes for the struct as declared (field order and tags of Task, Step
// and TaskMessage, HTML-safe string escaping, times as RFC 3339 with nanoseconds), in a
// quarter of the time and with no allocation; a differential test and a fuzz test hold
// it to that, so changing a field of these types fails TestTaskJSONMatches until this
// encoder follows.
//
// Task has no MarshalJSON on purpose: encoding/json re-scans what such a method returns,
// which made a task nested in a larger value cost more than reflection does. The hot
// paths call AppendJSON; everything else encodes Task by reflection, to the same bytes.

// AppendJSON appends the task's JSON to dst.
func (t *Task) AppendJSON(dst []byte) ([]byte, error) {
	var err error
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, t.ID, 10)
	dst = append(dst, `,"project_id":`...)
	dst = appendJSONString(dst, t.ProjectID)
	dst = append(dst, `,"agent_id":`...)
	dst = appendJSONIntPtr(dst, t.AgentID)
	dst = append(dst, `,"agent_name":`...)
	dst = appendJSONString(dst, t.AgentName)
	dst = append(dst, `,"conversation_id":`...)
	dst = appendJSONIntPtr(dst, t.ConversationID)
	dst = append(dst, `,"summary":`...)
	dst = appendJSONString(dst, t.Summary)
	dst = append(dst, `,"details":`...)
	dst = appendJSONString(dst, t.Details)
	dst = append(dst, `,"steps":`...)
	dst = appendJSONArray(dst, t.Steps, appendJSONStep)
	if t.Conversation != nil { // omitzero: a nil slice is left out, an empty one is []
		dst = append(dst, `,"conversation":`...)
		if dst, err = appendJSONTaskMessages(dst, t.Conversation); err != nil {
			return nil, err
		}
	}
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, t.Status)
	dst = append(dst, `,"source":`...)
	dst = appendJSONString(dst, t.Source)
	dst = append(dst, `,"taskType":`...)
	dst = appendJSONString(dst, t.TaskType)
	dst = append(dst, `,"required_skills":`...)
	dst = appendJSONArray(dst, t.RequiredSkills, appendJSONString)
	dst = append(dst, `,"current_step_num":`...)
	dst = strconv.AppendInt(dst, int64(t.CurrentStepNum), 10)
	dst = append(dst, `,"is_active":`...)
	dst = strconv.AppendBool(dst, t.IsActive)
	dst = append(dst, `,"is_waiting":`...)
	dst = strconv.AppendBool(dst, t.IsWaiting)
	dst = append(dst, `,"waiting_details":`...)
	dst = appendJSONStringPtr(dst, t.WaitingDetails)
	dst = append(dst, `,"waiting_version":`...)
	dst = strconv.AppendInt(dst, t.WaitingVersion, 10)
	dst = append(dst, `,"waiting_options":`...)
	dst = appendJSONArray(dst, t.WaitingOptions, appendJSONString)
	dst = append(dst, `,"waiting_schema":`...)
	if dst, err = appendJSONRaw(dst, t.WaitingSchema); err != nil {
		return nil, err
	}
	dst = append(dst, `,"waiting_expires_at":`...)
	if t.WaitingExpiresAt == nil {
		dst = append(dst, "null"...)
	} else if dst, err = appendJSONTime(dst, *t.WaitingExpiresAt); err != nil {
		return nil, err
	}
	dst = append(dst, `,"waiting_on_expiry":`...)
	dst = appendJSONStringPtr(dst, t.WaitingOnExpiry)
	dst = append(dst, `,"waiting_default":`...)
	if dst, err = appendJSONRaw(dst, t.WaitingDefault); err != nil {
		return nil, err
	}
	dst = append(dst, `,"waiting_ask":`...)
	dst = appendJSONStringPtr(dst, t.WaitingAsk)
	dst = append(dst, `,"created_at":`...)
	if dst, err = appendJSONTime(dst, t.CreatedAt); err != nil {
		return nil, err
	}
	dst = append(dst, `,"updated_at":`...)
	if dst, err = appendJSONTime(dst, t.UpdatedAt); err != nil {
		return nil, err
	}
	if t.BlockedReason != "" { // omitempty
		dst = append(dst, `,"blocked_reason":`...)
		dst = appendJSONString(dst, t.BlockedReason)
	}
	return append(dst, '}'), nil
}

// appendJSONTaskMessages writes conversation entries as a JSON array ([] when none).
func appendJSONTaskMessages(dst []byte, entries []TaskMessage) ([]byte, error) {
	var err error
	dst = append(dst, '[')
	for i, m := range entries {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = append(dst, `{"role":`...)
		dst = appendJSONString(dst, m.Role)
		dst = append(dst, `,"content":`...)
		dst = appendJSONString(dst, m.Content)
		dst = append(dst, `,"created_at":`...)
		if dst, err = appendJSONTime(dst, m.CreatedAt); err != nil {
			return nil, err
		}
		dst = append(dst, `,"author":`...)
		dst = appendJSONString(dst, m.Author)
		if m.Question != "" {
			dst = append(dst, `,"question":`...)
			dst = appendJSONString(dst, m.Question)
		}
		dst = append(dst, `,"data":`...)
		if dst, err = appendJSONRaw(dst, m.Data); err != nil {
			return nil, err
		}
		dst = append(dst, '}')
	}
	return append(dst, ']'), nil
}

// TaskEvent is what a task event (task.created, task.updated) carries: the task without
// its conversation, and in "appended" the conversation entries the change added (none
// for most changes). Carrying the whole conversation made every comment re-send all
// those before it: 30 comments of 50 KB wrote 23 MB of events, the last frame 1.5 MB.
type TaskEvent struct {
	Task     *Task
	Appended []TaskMessage
}

// AppendJSON appends the event's data to dst: the task's fields as Task.AppendJSON
// writes them, without "conversation", then "appended" (always an array).
func (e TaskEvent) AppendJSON(dst []byte) ([]byte, error) {
	t := *e.Task
	t.Conversation = nil
	dst, err := t.AppendJSON(dst)
	if err != nil {
		return nil, err
	}
	dst = append(dst[:len(dst)-1], `,"appended":`...) // reopen the task's object
	if dst, err = appendJSONTaskMessages(dst, e.Appended); err != nil {
		return nil, err
	}
	return append(dst, '}'), nil
}

// MarshalJSON is AppendJSON, for encoding/json.
func (e TaskEvent) MarshalJSON() ([]byte, error) { return e.AppendJSON(nil) }

// appendJSONArray writes items as a JSON array, or null for a nil slice, as
// encoding/json does.
func appendJSONArray[T any](dst []byte, items []T, appendItem func([]byte, T) []byte) []byte {
	if items == nil {
		return append(dst, "null"...)
	}
	dst = append(dst, '[')
	for i, item := range items {
		if i > 0 {
			dst = append(dst, ',')
		}
		dst = appendItem(dst, item)
	}
	return append(dst, ']')
}

func appendJSONStep(dst []byte, s Step) []byte {
	dst = append(dst, `{"id":`...)
	dst = strconv.AppendInt(dst, s.ID, 10)
	dst = append(dst, `,"title":`...)
	dst = appendJSONString(dst, s.Title)
	dst = append(dst, `,"status":`...)
	dst = appendJSONString(dst, s.Status)
	return append(dst, '}')
}

func appendJSONStringPtr(dst []byte, p *string) []byte {
	if p == nil {
		return append(dst, "null"...)
	}
	return appendJSONString(dst, *p)
}

// appendJSONRaw writes raw JSON as encoding/json writes a json.RawMessage: null when
// nil, else compacted and HTML-escaped (rare, so encoding/json does it).
func appendJSONRaw(dst []byte, raw json.RawMessage) ([]byte, error) {
	if raw == nil {
		return append(dst, "null"...), nil
	}
	b, err := json.Marshal(raw)
	if err != nil {
		return nil, err
	}
	return append(dst, b...), nil
}

func appendJSONIntPtr(dst []byte, p *int64) []byte {
	if p == nil {
		return append(dst, "null"...)
	}
	return strconv.AppendInt(dst, *p, 10)
}

// appendJSONTime writes t as time.Time's MarshalJSON does, with its error for years it
// cannot write in RFC 3339.
func appendJSONTime(dst []byte, t time.Time) ([]byte, error) {
	if y := t.Year(); y < 0 || y > 9999 {
		return nil, errors.New("Time.MarshalJSON: year outside of range [0,9999]")
	}
	if _, offset := t.Zone(); offset <= -24*60*60 || offset >= 24*60*60 {
		return nil, errors.New("Time.MarshalJSON: timezone hour outside of range [0,23]")
	}
	dst = append(dst, '"')
	dst = t.AppendFormat(dst, time.RFC3339Nano)
	return append(dst, '"'), nil
}

const hexDigits = "0123456789abcdef"

// appendJSONString writes s as a JSON string exactly as encoding/json does with its
// default HTML escaping: <, > and & as \u003c, \u003e, \u0026; control characters
// escaped; invalid UTF-8 as \ufffd; U+2028 and U+2029 escaped.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' && b != '<' && b != '>' && b != '&' {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch b {
			case '\\', '"':
				dst = append(dst, '\\', b)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[b>>4], hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		c, size := utf8.DecodeRuneInString(s[i:])
		if c == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i += size
			start = i
			continue
		}
		if c == '\u2028' || c == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[c&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}
