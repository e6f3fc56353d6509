package server

import (
	"fmt"
	"net/netip"
	"strings"
)

// ParseTrustedProxies reads --trusted-proxies: a comma-separated list of CIDR ranges
// (10.0.0.0/8, fd00::/8) or single addresses (127.0.0.1, ::1). An empty list trusts
// no one: X-Forwarded-For and X-Forwarded-Proto are then ignored.
func ParseTrustedProxies(list string) ([]netip.Prefix, error) {
	var out []netip.Prefix
	for _, item := range strings.Split(list, ",") {
		item = strings.TrimSpace(item)
		if item == "" {
			continue
		}
		if p, err := netip.ParsePrefix(item); err == nil {
			out = append(out, p.Masked())
			continue
		}
		a, err := netip.ParseAddr(item)
		if err != nil || a.Zone() != "" {
			return nil, fmt.Errorf("--trusted-proxies: %q is neither an IP address nor a CIDR range such as 10.0.0.0/8 or 127.0.0.1", item)
		}
		out = append(out, netip.PrefixFrom(a.Unmap(), a.Unmap().BitLen()))
	}
	return out, nil
}
