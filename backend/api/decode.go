package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// MaxJSONBody is the largest JSON request body accepted (the contract's 1 MiB).
const MaxJSONBody = 1 << 20

// readBody reads the whole request body, refusing more than limit bytes.
func readBody(c *gin.Context, limit int64) ([]byte, error) {
	if c.Request.ContentLength > limit {
		return nil, errs.TooLarge("request body is %d bytes; the limit is %d bytes", c.Request.ContentLength, limit)
	}
	body, err := io.ReadAll(http.MaxBytesReader(c.Writer, c.Request.Body, limit))
	var tooBig *http.MaxBytesError
	if errors.As(err, &tooBig) {
		return nil, errs.TooLarge("request body is over the limit of %d bytes", limit)
	}
	if err != nil {
		return nil, errs.Invalid("could not read the request body: %v", err)
	}
	return body, nil
}

// decodeJSON decodes body, a JSON object, into v. Keys match v's JSON field names
// exactly, or their camelCase twins (canonicalKeys); other keys are ignored. An empty
// body decodes as {} when allowEmpty. Every failure is a 400 that says where.
func decodeJSON(body []byte, v any, allowEmpty bool) error {
	if len(bytes.TrimSpace(body)) == 0 {
		if allowEmpty {
			return nil
		}
		return errs.Invalid("the request body must be a JSON object")
	}
	// Decoding null into a struct is a silent no-op in encoding/json, so null would pass
	// as {} (and PUT .../agent would unassign): require an object before decoding.
	// (Anything else that is not an object is malformed JSON: the decoder says where.)
	if kind := jsonValueKind(bytes.TrimSpace(body)[0]); kind != "" {
		return errs.Invalid("the request body must be a JSON object, not %s", kind)
	}
	// One pass of encoding/json over the usual body: Unmarshal checks the whole body is
	// one JSON value before it decodes anything (jsonError names what is wrong).
	canonical := body
	if t := reflect.TypeOf(v); !keysAsSpelt(body, t) {
		var err error
		if canonical, err = canonicalKeys(body, t, ""); err != nil {
			return err
		}
	}
	if err := json.Unmarshal(canonical, v); err != nil {
		return jsonError(err)
	}
	return nil
}

// canonicalKeys rewrites raw, a JSON value to be decoded into a t, so that each of its
// objects holds only the keys of t's fields, spelt as their json tags say: encoding/json
// matches keys case-insensitively, so {"status":"Done","STATUS":"Failed"} would set
// Failed while a proxy checking status saw Done. A key that is the camelCase twin of a
// snake_case field (agentId for agent_id) stands for that field; both spellings with
// different values are a 400. Every other key is dropped, as unknown fields are
// ignored. Values that are not what t expects are left for the decoder to refuse.
func canonicalKeys(raw json.RawMessage, t reflect.Type, path string) (json.RawMessage, error) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return raw, nil // the type reads its own JSON (model.Ref)
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(raw, &obj) != nil || obj == nil {
			return raw, nil
		}
		out := make(map[string]json.RawMessage, len(obj))
		for _, f := range jsonFields(t) {
			value, ok := obj[f.name]
			if twin := camelCase(f.name); twin != f.name {
				if tv, tok := obj[twin]; tok {
					if ok && !sameJSON(value, tv) {
						return nil, errs.Invalid("%s%s and %s%s differ: send one of them", path, f.name, path, twin)
					}
					value, ok = tv, true
				}
			}
			if !ok {
				continue
			}
			v, err := canonicalKeys(value, f.typ, path+f.name+".")
			if err != nil {
				return nil, err
			}
			out[f.name] = v
		}
		return json.Marshal(out)
	case reflect.Slice, reflect.Array:
		if !holdsStructs(t.Elem()) {
			return raw, nil // numbers or strings: nothing to rename (a vector's thousands)
		}
		var items []json.RawMessage
		if json.Unmarshal(raw, &items) != nil {
			return raw, nil
		}
		for i := range items {
			v, err := canonicalKeys(items[i], t.Elem(), fmt.Sprintf("%s[%d].", strings.TrimSuffix(path, "."), i))
			if err != nil {
				return nil, err
			}
			items[i] = v
		}
		return json.Marshal(items)
	}
	return raw, nil
}

var unmarshalerType = reflect.TypeFor[json.Unmarshaler]()

// keysAsSpelt reports, from the bytes alone, that encoding/json would decode raw into
// a t just as canonicalKeys would rewrite it: no key is a field's name in another case
// and none is a camelCase twin. Most bodies are so, and the rewrite (a decode into maps,
// a re-encoding) costs several times the decode itself. It may say no when the answer is
// yes (a value spelt like a field's name in another case): canonicalKeys then decides.
//
// Why the bytes suffice: each JSON string of the body is looked at, keys and values
// alike, lower-cased; one that is a field's name or twin but not spelt as the field is
// could be a key encoding/json matches case-insensitively. A string holding an escape
// cannot spell a name (names are letters, digits and _), but for \u escapes, and only
// ſ and the Kelvin sign fold to ASCII letters: bodies holding either take the rewrite.
func keysAsSpelt(raw []byte, t reflect.Type) bool {
	if bytes.Contains(raw, []byte(`\u`)) || bytes.Contains(raw, []byte("ſ")) || bytes.Contains(raw, []byte("\u212a")) {
		return false
	}
	names := spellingsOf(t)
	if names == nil {
		return false // a name too long for the buffer below
	}
	var lower [maxNameLen]byte
	for i := 0; i < len(raw); i++ {
		if raw[i] != '"' {
			continue
		}
		end, escaped := i+1, false
		for end < len(raw) && raw[end] != '"' {
			if raw[end] == '\\' {
				escaped = true
				end++
			}
			end++
		}
		if s := raw[i+1 : min(end, len(raw))]; !escaped && len(s) <= maxNameLen {
			for k, c := range s {
				if 'A' <= c && c <= 'Z' {
					c += 'a' - 'A'
				}
				lower[k] = c
			}
			if spelt, ok := names[string(lower[:len(s)])]; ok && spelt != string(s) {
				return false
			}
		}
		i = end
	}
	return true
}

// maxNameLen bounds the JSON names keysAsSpelt looks for: a type with a longer one
// (none has) always takes the rewrite.
const maxNameLen = 64

var fieldSpellings sync.Map // reflect.Type -> map[string]string

// spellingsOf maps each lower-cased JSON name of t's fields at every depth, and each
// lower-cased camelCase twin, to the one spelling that decodes as is: the field's name,
// or "" for a twin and for names that two fields spell differently. Computed once a
// type; nil when a name is longer than maxNameLen.
func spellingsOf(t reflect.Type) map[string]string {
	if names, ok := fieldSpellings.Load(t); ok {
		return names.(map[string]string)
	}
	names := map[string]string{}
	tooLong := false
	add := func(lower, spelt string) {
		tooLong = tooLong || len(lower) > maxNameLen
		if prev, ok := names[lower]; ok && prev != spelt {
			spelt = ""
		}
		names[lower] = spelt
	}
	seen := map[reflect.Type]bool{}
	var walk func(t reflect.Type)
	walk = func(t reflect.Type) {
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
			t = t.Elem()
		}
		if t.Kind() != reflect.Struct || seen[t] || reflect.PointerTo(t).Implements(unmarshalerType) {
			return
		}
		seen[t] = true
		for _, f := range jsonFields(t) {
			add(strings.ToLower(f.name), f.name)
			if twin := camelCase(f.name); twin != f.name {
				add(strings.ToLower(twin), "")
			}
			walk(f.typ)
		}
	}
	walk(t)
	if tooLong {
		names = nil
	}
	fieldSpellings.Store(t, names)
	return names
}

// holdsStructs reports whether values of t may hold JSON objects with field names.
func holdsStructs(t reflect.Type) bool {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	return t.Kind() == reflect.Struct
}

// jsonField is a field of a struct as encoding/json sees it.
type jsonField struct {
	name string
	typ  reflect.Type
}

// jsonFields lists the JSON fields of struct type t, those of embedded structs
// without a tag included, as encoding/json promotes them.
func jsonFields(t reflect.Type) []jsonField {
	var fields []jsonField
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" && f.Type.Kind() == reflect.Struct {
			fields = append(fields, jsonFields(f.Type)...)
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		fields = append(fields, jsonField{name, f.Type})
	}
	return fields
}

// camelCase is the camelCase twin of a snake_case name: agent_id gives agentId.
func camelCase(name string) string {
	parts := strings.Split(name, "_")
	for i := 1; i < len(parts); i++ {
		if parts[i] != "" {
			parts[i] = strings.ToUpper(parts[i][:1]) + parts[i][1:]
		}
	}
	return strings.Join(parts, "")
}

// sameJSON reports whether two JSON values are equal as values (key order, spacing
// and the spelling of numbers aside).
func sameJSON(a, b json.RawMessage) bool {
	var va, vb any
	if json.Unmarshal(a, &va) != nil || json.Unmarshal(b, &vb) != nil {
		return bytes.Equal(a, b)
	}
	return reflect.DeepEqual(va, vb)
}

func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var at *time.ParseError
	switch {
	case errors.As(err, &syntax) && strings.HasSuffix(syntax.Error(), "after top-level value"):
		return errs.Invalid("the request body must hold one JSON object and nothing after it")
	case errors.As(err, &syntax) && syntax.Error() == "unexpected end of JSON input":
		return errs.Invalid("malformed JSON: the body ends too early")
	case errors.As(err, &syntax):
		return errs.Invalid("malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return errs.Invalid("the request body must be a JSON object, not %s", typ.Value)
		}
		return errs.Invalid("field %s must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.Invalid("malformed JSON: the body ends too early")
	case errors.As(err, &at): // a time field (waiting_expires_at): encoding/json does not name it
		return errs.Invalid("a date and time must be RFC 3339, such as 2026-01-05T17:00:00Z, not %q", at.Value)
	}
	return errs.Invalid("malformed JSON: %v", err)
}

// jsonValueKind names the JSON value other than an object that starts with b, or "".
func jsonValueKind(b byte) string {
	switch {
	case b == 'n':
		return "null"
	case b == '[':
		return "an array"
	case b == '"':
		return "a string"
	case b == 't' || b == 'f':
		return "true or false"
	case b == '-' || b >= '0' && b <= '9':
		return "a number"
	}
	return ""
}

func jsonKind(goKind string) string {
	switch goKind {
	case "string":
		return "a string"
	case "int", "int64", "int32", "uint", "uint64":
		return "an integer"
	case "float64", "float32":
		return "a number"
	case "bool":
		return "true or false"
	case "slice":
		return "an array"
	case "struct", "map":
		return "an object"
	case "ptr":
		return "an integer or null"
	}
	return "of another type"
}

// bindJSON reads and decodes the request body into v.
func bindJSON(c *gin.Context, v any, allowEmpty bool) error {
	body, err := readBody(c, MaxJSONBody)
	if err != nil {
		return err
	}
	return decodeJSON(body, v, allowEmpty)
}

// pathID parses a positive integer path parameter.
func pathID(c *gin.Context, name, what string) (int64, error) {
	raw := c.Param(name)
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, errs.Invalid("%s must be a positive integer, not %q", what, raw)
	}
	return id, nil
}

// queryInt parses an optional integer query parameter; ok is false when it is absent.
func queryInt(c *gin.Context, name string) (v int64, ok bool, err error) {
	raw, present := c.GetQuery(name)
	if !present {
		return 0, false, nil
	}
	v, perr := strconv.ParseInt(raw, 10, 64)
	if perr != nil {
		return 0, false, errs.Invalid("query parameter %s must be an integer, not %q", name, raw)
	}
	return v, true, nil
}

func quoted(s string) string { return fmt.Sprintf("%q", s) }
