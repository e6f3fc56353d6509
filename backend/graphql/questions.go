package graphql

import (
	"encoding/json"
	"time"

	gql "github.com/graphql-go/graphql"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/service"
)

// A question's structure, deadline and person asked (service/questions.go), as
// arguments of setTaskStatus and fields of Task. GraphQL has no JSON type here: the
// schema, the default and a form's data travel as JSON text in a String.

// questionArgs adds the question's arguments to args.
func questionArgs(args gql.FieldConfigArgument) gql.FieldConfigArgument {
	args["waitingOptions"] = &gql.ArgumentConfig{Type: gql.NewList(nnString), Description: "With Waiting: 1 to 10 answers to pick from (respond's choice)."}
	args["waitingSchema"] = &gql.ArgumentConfig{Type: gql.String, Description: "With Waiting: the form an answer fills (respond's data), as JSON text: an object schema as MCP elicitation allows it."}
	args["waitingExpiresAt"] = &gql.ArgumentConfig{Type: gql.String, Description: "With Waiting: the deadline, RFC 3339, in the future."}
	args["waitingOnExpiry"] = &gql.ArgumentConfig{Type: gql.String, Description: "At the deadline: fail (the default) or default (answer with waitingDefault)."}
	args["waitingDefault"] = &gql.ArgumentConfig{Type: gql.String, Description: "The answer given at the deadline, as JSON text: one of the options, the form's object, or a text."}
	args["waitingAsk"] = &gql.ArgumentConfig{Type: gql.String, Description: "The email of the person asked."}
	return args
}

// questionOf reads the question's arguments.
func questionOf(args map[string]any) (*service.Question, error) {
	q := &service.Question{OnExpiry: optString(args, "waitingOnExpiry"), Ask: optString(args, "waitingAsk")}
	if _, ok := args["waitingOptions"].([]any); ok {
		q.Options = stringList(args, "waitingOptions")
	}
	var err error
	if q.Schema, err = jsonArg(args, "waitingSchema"); err != nil {
		return nil, err
	}
	if q.Default, err = jsonArg(args, "waitingDefault"); err != nil {
		return nil, err
	}
	if at := optString(args, "waitingExpiresAt"); at != nil {
		t, err := time.Parse(time.RFC3339, *at)
		if err != nil {
			return nil, errs.Invalid("waitingExpiresAt must be RFC 3339, such as 2026-01-05T17:00:00Z, not %q", *at)
		}
		q.ExpiresAt = &t
	}
	return q, nil
}

// jsonArg reads an argument of JSON text; nil when absent.
func jsonArg(args map[string]any, name string) (json.RawMessage, error) {
	s := optString(args, name)
	if s == nil {
		return nil, nil
	}
	if !json.Valid([]byte(*s)) {
		return nil, errs.Invalid("%s must be JSON text", name)
	}
	return json.RawMessage(*s), nil
}

// dataArg reads respond's data: a JSON object as text; nil when absent.
func dataArg(args map[string]any) (map[string]any, error) {
	raw, err := jsonArg(args, "data")
	if raw == nil || err != nil {
		return nil, err
	}
	var data map[string]any
	if json.Unmarshal(raw, &data) != nil || data == nil {
		return nil, errs.Invalid("data must be a JSON object: the fields of the question's form")
	}
	return data, nil
}

// jsonText is raw JSON as a String field: null when none.
func jsonText(raw json.RawMessage) any {
	if raw == nil {
		return nil
	}
	return string(raw)
}

// questionFields are the Task's fields of its question.
var questionFields = gql.Fields{
	"waitingOptions": &gql.Field{Type: gql.NewList(nnString), Description: "The answers to pick from; null unless Waiting with options.",
		Resolve: field(func(t model.Task) any {
			if t.WaitingOptions == nil {
				return nil
			}
			return t.WaitingOptions
		})},
	"waitingSchema": &gql.Field{Type: gql.String, Description: "The form an answer fills, as JSON text; null unless Waiting with a form.",
		Resolve: field(func(t model.Task) any { return jsonText(t.WaitingSchema) })},
	"waitingExpiresAt": &gql.Field{Type: gql.String, Description: "The question's deadline (RFC 3339, UTC); null when none.",
		Resolve: field(func(t model.Task) any { return timePtrString(t.WaitingExpiresAt) })},
	"waitingOnExpiry": &gql.Field{Type: gql.String, Description: "What the deadline does: fail or default; null when no deadline.",
		Resolve: field(func(t model.Task) any { return stringPtr(t.WaitingOnExpiry) })},
	"waitingDefault": &gql.Field{Type: gql.String, Description: "The answer given at the deadline, as JSON text; null when none.",
		Resolve: field(func(t model.Task) any { return jsonText(t.WaitingDefault) })},
	"waitingAsk": &gql.Field{Type: gql.String, Description: "The email of the person asked; null when the question names nobody (then the task's creator, else every member who may write tasks, is asked).",
		Resolve: field(func(t model.Task) any { return stringPtr(t.WaitingAsk) })},
}

func stringPtr(s *string) any {
	if s == nil {
		return nil
	}
	return *s
}

func init() {
	for name, f := range questionFields {
		taskType.AddFieldConfig(name, f)
	}
	taskMessageType.AddFieldConfig("data", &gql.Field{Type: gql.String,
		Description: "On an answer given as data (a form): the object as JSON text (content is its readable text); null on every other entry.",
		Resolve:     field(func(m model.TaskMessage) any { return jsonText(m.Data) })})
}
