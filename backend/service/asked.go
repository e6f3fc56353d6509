package service

import (
	"github.com/agentdesk/agentdesk/backend/auth"
)

// personOf is the user p acts as: a signed-in user, or the maker of a token; 0 for
// anyone else (an agent, the local owner, a token nobody made).
func personOf(p *auth.Principal) int64 {
	switch {
	case p == nil:
		return 0
	case p.Kind == auth.KindUser:
		return p.UserID
	case p.Kind == auth.KindToken:
		return p.TokenMaker
	}
	return 0
}
