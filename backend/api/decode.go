package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"

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

// decodeJSON decodes body, a JSON object, into v. Unknown fields are ignored; an empty
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
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(v); err != nil {
		return jsonError(err)
	}
	if dec.More() {
		return errs.Invalid("the request body must hold one JSON object and nothing after it")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errs.Invalid("the request body must hold one JSON object and nothing after it")
	}
	return nil
}

func jsonError(err error) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &syntax):
		return errs.Invalid("malformed JSON at byte %d: %v", syntax.Offset, syntax)
	case errors.As(err, &typ):
		if typ.Field == "" {
			return errs.Invalid("the request body must be a JSON object, not %s", typ.Value)
		}
		return errs.Invalid("field %s must be %s, not %s", typ.Field, jsonKind(typ.Type.Kind().String()), typ.Value)
	case errors.Is(err, io.ErrUnexpectedEOF):
		return errs.Invalid("malformed JSON: the body ends too early")
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
