package oidcop_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/agentdesk/agentdesk/backend/testenv/oidcop"
)

// TestEndSessionReturns: after end_session the provider sends the browser back to the
// client's origin (the example's clients accept no post-logout URI at all).
func TestEndSessionReturns(t *testing.T) {
	p, err := oidcop.Start(oidcop.Options{ClientID: "agentdesk", ClientSecret: "s",
		RedirectURIs: []string{"http://127.0.0.1:9/auth/callback"}})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	q := url.Values{"client_id": {"agentdesk"}, "post_logout_redirect_uri": {"http://127.0.0.1:9/"}}
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(p.Issuer + "/end_session?" + q.Encode())
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "http://127.0.0.1:9/" {
		t.Fatalf("end_session: %d to %q", resp.StatusCode, resp.Header.Get("Location"))
	}
}

// TestRequireIDTokenHint: with RequireIDTokenHint, end_session refuses a
// post_logout_redirect_uri without an id_token_hint (as Hydra does), and an invalid one.
func TestRequireIDTokenHint(t *testing.T) {
	p, err := oidcop.Start(oidcop.Options{ClientID: "agentdesk", ClientSecret: "s",
		RedirectURIs: []string{"http://127.0.0.1:9/auth/callback"}, RequireIDTokenHint: true})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	for _, hint := range []string{"", "not-a-token"} {
		q := url.Values{"client_id": {"agentdesk"}, "post_logout_redirect_uri": {"http://127.0.0.1:9/"}}
		if hint != "" {
			q.Set("id_token_hint", hint)
		}
		resp, err := c.Get(p.Issuer + "/end_session?" + q.Encode())
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode == http.StatusFound && resp.Header.Get("Location") == "http://127.0.0.1:9/" {
			t.Errorf("end_session with id_token_hint %q went back to the client", hint)
		}
	}
}
