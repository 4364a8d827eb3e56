package mcp

import (
	"strings"
	"testing"
)

// TestEveryForwardingHeaderIsRemote: each header with which a common
// proxy, CDN or load balancer says it forwarded a request, in any case,
// makes /mcp take the request as remote (403 without a token); headers
// that only look alike do not.
func TestEveryForwardingHeaderIsRemote(t *testing.T) {
	_, local := serve(t, Config{Search: &fakeSearch{}})
	for _, h := range []string{"Via", "CF-Connecting-IP", "True-Client-IP", "X-Client-IP", "X-Cluster-Client-IP",
		"Fastly-Client-IP", "Forwarded-For", "X-Original-Forwarded-For", "via", "cf-connecting-ip", "Client-IP",
		"CF-Connecting-IPv6", "X-Envoy-External-Address", "X-ProxyUser-IP", "X-Azure-ClientIP"} {
		st, body := post(t, local.URL, map[string]string{h: "203.0.113.5"})
		if st != 403 || !strings.Contains(body, "--mcp-token") {
			t.Errorf("%s from an undeclared proxy: %d %s", h, st, body)
		}
	}
	for _, h := range []string{"X-Request-Id", "Viaduct", "X-Client-Name"} {
		if st, body := post(t, local.URL, map[string]string{h: "1.2.3.4"}); st != 200 {
			t.Errorf("%s alone: %d %s", h, st, body)
		}
	}
}
