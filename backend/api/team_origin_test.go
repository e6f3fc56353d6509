package api_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"github.com/agentdesk/agentdesk/backend/model"
	"github.com/agentdesk/agentdesk/backend/testenv/pgtest"
)

// TestTeamStreamOnlyFromOwnOrigin: a signed-in person's cookie goes with every request
// their browser makes to the server, whatever page makes it (cookies are not bound to a
// port). So the event stream opens with the cookie only for a page of the public URL:
// a page on a loopback port of the same machine, or on the loopback address the server
// listens on behind its proxy, is refused before the upgrade.
func TestTeamStreamOnlyFromOwnOrigin(t *testing.T) {
	pgtest.Engines(t, testTeamStreamOnlyFromOwnOrigin)
}

func testTeamStreamOnlyFromOwnOrigin(t *testing.T, engine string) {
	tm := startTeam(t, engine)
	tm.invite(t, "dana@example.com", model.RoleMember)
	cookie := tm.signIn(t, tm.browser(t), "dana")
	_, port, _ := strings.Cut(strings.TrimPrefix(tm.env.URL, "http://"), ":")
	for origin, want := range map[string]int{
		teamPublicURL:              http.StatusSwitchingProtocols,
		"http://127.0.0.1:3000":    http.StatusForbidden,
		"http://localhost:5173":    http.StatusForbidden,
		"http://127.0.0.1:" + port: http.StatusForbidden,
		"https://agentdesk.test":   http.StatusForbidden,
	} {
		h := http.Header{"Cookie": {"agentdesk_session=" + cookie}, "Origin": {origin}}
		conn, resp, _ := websocket.DefaultDialer.Dial(strings.Replace(tm.env.URL, "http://", "ws://", 1)+"/api/events", h)
		if conn != nil {
			conn.Close()
		}
		if resp == nil || resp.StatusCode != want {
			status := 0
			if resp != nil {
				status = resp.StatusCode
			}
			t.Errorf("the stream with the cookie from %s: %d, want %d", origin, status, want)
		}
	}
}
