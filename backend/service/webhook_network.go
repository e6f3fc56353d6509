package service

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"

	"github.com/agentdesk/agentdesk/backend/errs"
)

// Webhooks reach the public internet only (the contract's "Hardening", round 3): an
// administrator must not be able to make the server POST to, and read the answer of,
// services that only the server can reach (loopback, the private network, a cloud's
// metadata address). A URL is refused at creation when its host is or resolves to such
// an address, and every connection is refused when the address actually dialled is one,
// so that a name resolving elsewhere later (DNS rebinding) gains nothing. The operator
// lifts the rule with --webhooks-allow-private; the desktop window always does.

// AllowPrivateWebhooksFlag is how the operator lifts the rule, named in refusals.
const AllowPrivateWebhooksFlag = "--webhooks-allow-private"

// cgnat is the shared address space of carrier-grade NAT (RFC 6598), which netip does
// not classify.
var cgnat = netip.MustParsePrefix("100.64.0.0/10")

// nonPublicKind names the kind of a non-public address ("a loopback address"), or
// returns "" for an address that webhooks may reach.
func nonPublicKind(ip netip.Addr) string {
	ip = ip.Unmap() // ::ffff:127.0.0.1 is 127.0.0.1
	switch {
	case ip.IsLoopback():
		return "a loopback address"
	case ip.IsPrivate(): // RFC 1918 and fc00::/7
		return "a private address"
	case ip.IsLinkLocalUnicast(): // 169.254/16 (cloud metadata) and fe80::/10
		return "a link-local address"
	case cgnat.Contains(ip):
		return "a shared (CGNAT) address"
	case ip.IsUnspecified(): // 0.0.0.0 and :: reach this machine
		return "an unspecified address"
	}
	return ""
}

// refusedAddressError is a connection the rule refused; its text is what the delivery
// log shows.
type refusedAddressError struct {
	ip   netip.Addr
	kind string
}

func (e *refusedAddressError) Error() string {
	return fmt.Sprintf("refused: %s is %s; start the server with %s to allow it", e.ip.Unmap(), e.kind, AllowPrivateWebhooksFlag)
}

// webhookLookupTimeout bounds the name lookup of a URL's host at creation.
const webhookLookupTimeout = 5 * time.Second

// checkWebhookHost refuses, unless private addresses are allowed, a URL host that is or
// resolves to a non-public address. A name that does not resolve now is accepted: each
// delivery's connection is checked anyway.
func (s *Service) checkWebhookHost(ctx context.Context, host string) error {
	if s.webhooksAllowPrivate {
		return nil
	}
	const public = "webhooks may reach the public internet only (the server's operator can allow private addresses with " +
		AllowPrivateWebhooksFlag + ")"
	if ip, err := netip.ParseAddr(host); err == nil {
		if kind := nonPublicKind(ip); kind != "" {
			return errs.Invalid("url: %s is %s: %s", ip.Unmap(), kind, public)
		}
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, webhookLookupTimeout)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		if kind := nonPublicKind(ip); kind != "" {
			return errs.Invalid("url: %s resolves to %s, %s: %s", host, ip.Unmap(), kind, public)
		}
	}
	return nil
}

// checkDialledAddress is the webhook dialer's Control: it sees the resolved ip:port
// about to be connected, whatever name led there.
func checkDialledAddress(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refused: %s is not an IP address and port", address)
	}
	if kind := nonPublicKind(ap.Addr()); kind != "" {
		return &refusedAddressError{ip: ap.Addr(), kind: kind}
	}
	return nil
}

// newWebhookClient makes the client that sends every delivery. It never follows a
// redirect (the target is fixed at creation: a 3xx is a failed attempt), gives up after
// WebhookTimeout, and connects directly (no HTTP_PROXY: through a proxy, the address
// dialled would be the proxy's, not the receiver's), refusing non-public addresses
// unless allowPrivate.
func newWebhookClient(allowPrivate bool) *http.Client {
	return &http.Client{
		Timeout: WebhookTimeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
		Transport: newGuardedTransport(allowPrivate),
	}
}

// newGuardedTransport connects directly, within WebhookTimeout, refusing non-public
// addresses unless allowPrivate: the webhooks' rule, which every request agentdesk
// makes to a URL an administrator or a client gave follows (remote A2A agents, push
// notifications).
func newGuardedTransport(allowPrivate bool) *http.Transport {
	dialer := &net.Dialer{Timeout: WebhookTimeout, KeepAlive: 30 * time.Second}
	if !allowPrivate {
		dialer.Control = checkDialledAddress
	}
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = nil
	t.DialContext = dialer.DialContext
	t.MaxIdleConnsPerHost = 4
	return t
}
