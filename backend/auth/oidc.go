package auth

import "strings"

// OIDC is team mode's configuration: people sign in through an OpenID Connect
// provider. The zero value (no Issuer) is a server without team mode.
type OIDC struct {
	PublicURL      string   // what people type; the redirect URI is PublicURL + /auth/callback
	Issuer         string   // the provider's issuer URL (discovery at /.well-known/openid-configuration)
	ClientID       string   // the client registered at the provider
	ClientSecret   string   // from AGENTDESK_OIDC_CLIENT_SECRET only
	Scopes         []string // default openid, email, profile
	AllowedDomains []string // email domains whose people join on first sign-in; empty: invited people only
	ProviderName   string   // shown as "Sign in with <name>"; "" means the issuer's host
	// TrustEmail (--oidc-trust-email) takes every email the provider gives as verified,
	// for providers that never send email_verified (Entra ID). Otherwise an email counts
	// only when the provider says email_verified: true.
	TrustEmail bool
}

// Enabled reports whether team mode is on.
func (o OIDC) Enabled() bool { return o.Issuer != "" }

// Secure reports whether the public URL is https: the cookie is then Secure and
// __Host- prefixed.
func (o OIDC) Secure() bool { return strings.HasPrefix(strings.ToLower(o.PublicURL), "https://") }

// SessionCookie is the name of the session cookie.
func (o OIDC) SessionCookie() string {
	if o.Secure() {
		return "__Host-agentdesk_session"
	}
	return "agentdesk_session"
}

// NewSessionValue is a fresh session cookie value: 256 random bits, base64url.
func NewSessionValue() string { return RandomString(43) } // 43 base62 characters hold 256 bits
