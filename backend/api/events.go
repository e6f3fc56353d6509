package api

import (
	"encoding/json"
	"net/http"
	"strings"

	"github.com/gin-gonic/gin"
	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/auth"
	"github.com/agentdesk/agentdesk/backend/errs"
	"github.com/agentdesk/agentdesk/backend/events"
	"github.com/agentdesk/agentdesk/backend/service"
)

// streamEvents serves GET /api/events: it authenticates (Bearer header, ?access_token=
// for browsers, or agent headers with ?project_id=), then upgrades to a WebSocket that
// replays the events after ?since= and follows the live stream.
func streamEvents(svc *service.Service, hub *events.Hub, upgrader *websocket.Upgrader) gin.HandlerFunc {
	return func(c *gin.Context) {
		p, err := streamPrincipal(c, svc)
		if err != nil {
			fail(c, err)
			return
		}
		if err := svc.WatchEvents(c.Request.Context(), p); err != nil {
			fail(c, err)
			return
		}
		since := int64(-1) // live events only
		if v, ok, err := queryInt(c, "since"); err != nil {
			fail(c, err)
			return
		} else if ok {
			if v < 0 {
				fail(c, errs.Invalid("since must be 0 or more"))
				return
			}
			since = v
		}
		if !websocket.IsWebSocketUpgrade(c.Request) {
			fail(c, errs.Invalid("GET /api/events is a WebSocket: connect with a WebSocket client"))
			return
		}
		st, err := hub.Open(c.Request.Context(), p, since)
		if err != nil {
			fail(c, err)
			return
		}
		conn, err := upgrader.Upgrade(c.Writer, c.Request, nil)
		if err != nil {
			hub.Discard(st) // the upgrader has answered (403 for a foreign origin)
			return
		}
		hub.Serve(c.Request.Context(), conn, st)
	}
}

// handshakeRefused answers a handshake the WebSocket library refuses (no
// Sec-WebSocket-Version: 13, a malformed key, a foreign Origin) in the error envelope,
// as every /api answer, instead of the library's plain text; like the library, it
// names the version it speaks.
func handshakeRefused(w http.ResponseWriter, _ *http.Request, status int, reason error) {
	code := errs.InvalidArgument
	switch status {
	case http.StatusForbidden:
		code = errs.Forbidden
	case http.StatusMethodNotAllowed: // not reached: HEAD never upgrades, and the route is GET only
		code = errs.MethodNotAllowed
	case http.StatusInternalServerError:
		code = errs.Internal
	}
	w.Header().Set("Sec-WebSocket-Version", "13")
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	msg := "the WebSocket handshake was refused: " + strings.TrimPrefix(reason.Error(), "websocket: ")
	_ = json.NewEncoder(w).Encode(ErrorBody{ErrorDetail{code, msg}})
}

// streamPrincipal authenticates the stream: besides the headers, browsers send their
// token as ?access_token= and agents name their project with ?project_id=.
func streamPrincipal(c *gin.Context, svc *service.Service) (*auth.Principal, error) {
	creds := credentials(svc, c, service.WhereEvents)
	creds.Token, creds.ProjectID = c.Query("access_token"), c.Query("project_id")
	return svc.Authenticate(c.Request.Context(), creds)
}
