package graphql_test

import (
	"regexp"
	"testing"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/testenv"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// internalName matches what people should never read in an error: Go package
// functions, GraphQL field names in camelCase, library wording (issue 20, item 9).
var internalName = regexp.MustCompile(`strconv\.|time: invalid|monthlyUsd|setBudget|Atoi|ParseInt`)

// Messages the UI shows as they come say what is wrong in words.
func TestMessagesSayItInWords(t *testing.T) { pgtest.Engines(t, testMessagesSayItInWords) }

func testMessagesSayItInWords(t *testing.T, engine string) {
	env := testenv.StartOn(t, engine)
	admin := env.Token(t, env.Project.ID, auth.Admin, auth.TaskRead, auth.TaskWrite)
	for _, c := range []struct{ name, query, want string }{
		{"cron field not a number", `mutation { createJob(name: "a", cron: "x * * * *", summary: "s") { id } }`, `"x" is not a number`},
		{"cron range", `mutation { createJob(name: "b", cron: "0 9-z * * *", summary: "s") { id } }`, `"z" is not a number`},
		{"cron duration", `mutation { createJob(name: "c", cron: "@every soon", summary: "s") { id } }`, `"soon" is not a duration`},
		{"negative budget", `mutation { setBudget(monthlyUsd: -5) { monthlyUsd } }`, `the monthly budget must be between $0 and`},
	} {
		r := do(t, env, admin, c.query, nil)
		if code := r.code(t); code != "invalid_argument" {
			t.Errorf("%s: code %q, want invalid_argument", c.name, code)
			continue
		}
		msg := r.Errors[0].Message
		if !regexp.MustCompile(regexp.QuoteMeta(c.want)).MatchString(msg) || internalName.MatchString(msg) {
			t.Errorf("%s: %q, want it to say %q and name no internals", c.name, msg, c.want)
		}
	}
}
