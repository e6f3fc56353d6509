package api

import (
	"html/template"
	"net/http"
	"strconv"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/service"
)

// The page an email's link opens (backend/service/mail.go). GET shows the question and
// a button; only the POST that button sends answers: mail scanners and link previews
// follow links, never forms. The token in the path is the credential.

type mailPageData struct {
	Q     *service.MailQuestion
	Token string
	Error string // why the last POST was refused, or why the link is not known
}

var mailPageTemplate = template.Must(template.New("mail").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>agentdesk: answer a question</title>
<style>
body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1f2328}
.q{white-space:pre-wrap;background:#f6f8fa;border-radius:6px;padding:.75rem 1rem}
button{font:inherit;padding:.5rem 1rem;margin:.25rem .5rem .25rem 0;border-radius:6px;border:1px solid #1f6feb;background:#1f6feb;color:#fff;cursor:pointer}
textarea{font:inherit;width:100%;box-sizing:border-box;min-height:6rem}
.note{color:#59636e;font-size:.9rem}.err{color:#b42318}
</style></head><body>
{{if .Q}}
<h1>{{if .Q.AgentName}}{{.Q.AgentName}}{{else}}An agent{{end}} asks</h1>
<p>Task #{{.Q.TaskID}}: {{.Q.Summary}}</p>
{{if .Q.Question}}<div class="q">{{.Q.Question}}</div>{{end}}
{{if .Q.Answered}}
<p id="status"><strong>Your answer is in.</strong> The agent has been told.</p>
{{else if .Q.Closed}}
<p id="status" class="err">This link answers nothing: {{.Q.Closed}}.</p>
{{else}}
{{if .Error}}<p id="status" class="err">{{.Error}}</p>{{end}}
<form method="post">
{{if .Q.Option}}
<p>Answer <strong>{{.Q.Option}}</strong>?</p>
<button type="submit">Answer “{{.Q.Option}}”</button>
{{else}}
{{range $i, $o := .Q.Options}}<button type="submit" name="choice" value="{{$i}}">{{$o}}</button>{{end}}
{{if not .Q.Options}}
<p><label for="response">Your answer</label></p>
<textarea id="response" name="response" required></textarea>
<p><button type="submit">Send answer</button></p>
{{end}}
{{end}}
</form>
{{end}}
<p class="note">Answering as {{.Q.Recipient}}. Each link in the email answers once.</p>
{{else}}
<h1>Link not known</h1>
<p id="status" class="err">{{.Error}}</p>
{{end}}
</body></html>
`))

// mailPage answers GET /mail/{token}: the question, and a button to answer it.
func mailPage(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		token := c.Param("token")
		q, err := svc.MailLink(c.Request.Context(), token)
		renderMailPage(c, q, token, err)
	}
}

// mailAnswer answers POST /mail/{token}: the click that answers.
func mailAnswer(svc *service.Service) gin.HandlerFunc {
	return func(c *gin.Context) {
		token := c.Param("token")
		in := service.MailAnswer{Response: c.PostForm("response")}
		if v, ok := c.GetPostForm("choice"); ok {
			i, err := strconv.Atoi(v)
			if err != nil {
				q, _ := svc.MailLink(c.Request.Context(), token)
				renderMailPage(c, q, token, errs.Invalid("choice must be an option's index, not %q", v))
				return
			}
			in.Choice = &i
		}
		q, err := svc.AnswerByMail(c.Request.Context(), token, in)
		if err != nil && q == nil && errs.CodeOf(err) == errs.InvalidArgument {
			q, _ = svc.MailLink(c.Request.Context(), token) // show the form again, with why
		}
		renderMailPage(c, q, token, err)
	}
}

// renderMailPage shows the page with the status that says what happened: 200, 410 for
// a link that answers nothing any more, 404 for one not known, 400 for a refused answer.
func renderMailPage(c *gin.Context, q *service.MailQuestion, token string, err error) {
	// The token is in the URL: no other site learns it from a Referer, no cache keeps it.
	c.Header("Referrer-Policy", "no-referrer")
	c.Header("Cache-Control", "no-store")
	status := http.StatusOK
	data := mailPageData{Q: q, Token: token}
	switch {
	case err != nil:
		if errs.CodeOf(err) == errs.Internal {
			fail(c, err) // logged there; the envelope says no more than it should
			return
		}
		status = errs.HTTPStatus(err)
		_, data.Error = errs.Public(err)
	case q.Closed != "" && !q.Answered:
		status = http.StatusGone
	}
	c.Status(status)
	c.Header("Content-Type", "text/html; charset=utf-8")
	if err := mailPageTemplate.Execute(c.Writer, data); err != nil {
		c.Error(err) //nolint:errcheck // the status is sent: nothing more to say
	}
}
