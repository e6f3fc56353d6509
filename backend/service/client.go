package service

import "context"

type clientAddressKey struct{}

// WithClientAddress is ctx carrying the client address of the request: the peer, or
// behind a trusted proxy (--trusted-proxies) the client it names in X-Forwarded-For.
// The HTTP interface sets it once per request; credentials, the request log, a
// session's address and the rate limiter all use this one value.
func WithClientAddress(ctx context.Context, addr string) context.Context {
	return context.WithValue(ctx, clientAddressKey{}, addr)
}

// ClientAddress is the client address of ctx's request, "" when it came through no
// network (the desktop window's in-process handler, the CLI, tests calling the service).
func ClientAddress(ctx context.Context) string {
	s, _ := ctx.Value(clientAddressKey{}).(string)
	return s
}
