package model

import (
	"bytes"
	"encoding/json"
	"errors"
	"strconv"
)

// Ref is a reference that a request may give as a JSON number or string, such as a
// conversation's integer id or its uuid. It holds the text of either.
type Ref string

// UnmarshalJSON accepts a number or a string; null leaves the Ref empty.
func (r *Ref) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	switch {
	case bytes.Equal(b, []byte("null")):
		*r = ""
		return nil
	case len(b) > 0 && b[0] == '"':
		var s string
		if err := json.Unmarshal(b, &s); err != nil {
			return err
		}
		*r = Ref(s)
		return nil
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return errors.New("must be an integer id or a uuid string")
	}
	*r = Ref(strconv.FormatInt(n, 10))
	return nil
}
