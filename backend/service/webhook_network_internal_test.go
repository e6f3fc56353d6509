package service

import (
	"net/netip"
	"testing"
)

// The ranges webhooks may not reach, at their edges; IPv4 inside IPv6 is judged as IPv4.
func TestNonPublicKind(t *testing.T) {
	for kind, addrs := range map[string][]string{
		"a loopback address":       {"127.0.0.1", "127.255.255.255", "::1", "::ffff:127.0.0.1"},
		"a private address":        {"10.0.0.0", "10.255.255.255", "172.16.0.0", "172.31.255.255", "192.168.0.1", "fc00::", "fdff:ffff::1", "::ffff:10.1.2.3"},
		"a link-local address":     {"169.254.0.1", "169.254.169.254", "fe80::1", "febf::1"},
		"a shared (CGNAT) address": {"100.64.0.0", "100.127.255.255"},
		"an unspecified address":   {"0.0.0.0", "::"},
		// Public: just outside each range.
		"": {"126.255.255.255", "128.0.0.1", "9.255.255.255", "11.0.0.0", "172.15.255.255", "172.32.0.0", "192.167.255.255",
			"192.169.0.0", "169.253.255.255", "169.255.0.0", "100.63.255.255", "100.128.0.0", "8.8.8.8", "fbff::1", "fec0::1",
			"2001:4860:4860::8888"},
	} {
		for _, addr := range addrs {
			if got := nonPublicKind(netip.MustParseAddr(addr)); got != kind {
				t.Errorf("%s: %q, want %q", addr, got, kind)
			}
		}
	}
}
