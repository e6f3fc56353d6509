package api

import (
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"

	"github.com/agentdesk/agentdesk/backend/service"
)

// Conditional requests on one task (RFC 9110 section 13): GET sends the task's strong
// ETag and answers 304 to an If-None-Match that names it; every change of one task
// (PUT status, agent, step status; POST respond and agent callback; DELETE) honours
// If-Match, which the service checks inside the write that makes the change.

// entityTags parses the If-Match or If-None-Match header lines: "*" (any), or a list of
// entity tags, weak ones with their W/ prefix. Anything that is not an entity tag is
// skipped, so a malformed value matches nothing.
func entityTags(lines []string) (tags []string, star bool) {
	for _, line := range lines {
		s := line
		for {
			s = strings.TrimLeft(s, " \t,")
			if s == "" {
				break
			}
			if s[0] == '*' {
				star = true
				s = s[1:]
				continue
			}
			weak := strings.HasPrefix(s, "W/")
			rest := strings.TrimPrefix(s, "W/")
			if !strings.HasPrefix(rest, `"`) {
				// Not an entity tag: skip to the next element.
				if i := strings.IndexByte(s, ','); i >= 0 {
					s = s[i:]
					continue
				}
				break
			}
			end := strings.IndexByte(rest[1:], '"')
			if end < 0 {
				break
			}
			tag := rest[:end+2]
			if weak {
				tag = "W/" + tag
			}
			tags = append(tags, tag)
			s = rest[end+2:]
		}
	}
	return tags, star
}

// ifMatch is the request's If-Match precondition, nil without one: pass it to the
// service call that changes the task.
func ifMatch(c *gin.Context) *service.TaskPrecondition {
	lines := c.Request.Header.Values("If-Match")
	if len(lines) == 0 {
		return nil
	}
	tags, star := entityTags(lines)
	return &service.TaskPrecondition{Any: star, ETags: tags}
}

// notModified answers 304 when the request's If-None-Match names etag (weak comparison,
// as RFC 9110 13.1.2 says) or is "*", and reports whether it did.
func notModified(c *gin.Context, etag string) bool {
	lines := c.Request.Header.Values("If-None-Match")
	if len(lines) == 0 || etag == "" {
		return false
	}
	tags, star := entityTags(lines)
	hit := star
	for _, tag := range tags {
		hit = hit || strings.TrimPrefix(tag, "W/") == strings.TrimPrefix(etag, "W/")
	}
	if hit {
		c.Header("ETag", etag)
		c.Status(http.StatusNotModified)
	}
	return hit
}
