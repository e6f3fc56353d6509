// Package auth defines who is calling (the Principal), the scopes, the token value
// format and its hash, and the agent header digest. It holds no state: the service
// layer looks principals up and checks scopes with these pieces.
package auth
