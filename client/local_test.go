package client

import "testing"

// TestForwardHeader: the headers with which a proxy says it passed a
// request, in any case, and not the ones every browser sends.
func TestForwardHeader(t *testing.T) {
	for _, h := range []string{"X-Forwarded-For", "x-forwarded-host", "X-FORWARDED-PROTO", "Forwarded", "via",
		"X-Real-Ip", "CF-Connecting-IP", "cf-connecting-ipv6", "True-Client-IP", "Fastly-Client-Ip", "X-Azure-ClientIP"} {
		if !ForwardHeader(h) {
			t.Errorf("ForwardHeader(%q) = false, want true", h)
		}
	}
	for _, h := range []string{"X-Forwarded-", "Host", "Origin", "Accept", "User-Agent", "X-Forward", "Forwarded-By-Nobody"} {
		if ForwardHeader(h) {
			t.Errorf("ForwardHeader(%q) = true, want false", h)
		}
	}
}

// TestLoopbackHost: this machine's names and addresses, with or without a
// port, and nothing else.
func TestLoopbackHost(t *testing.T) {
	for host, want := range map[string]bool{
		"localhost": true, "LOCALHOST.:8080": true, "app.localhost:1": true, "127.0.0.1": true,
		"127.8.9.1:80": true, "[::1]:8080": true, "::1": true, "[::ffff:127.0.0.1]:1": true,
		"example.org": false, "localhost.example.org": false, "10.0.0.1:80": false, "[::2]:80": false, "": false,
	} {
		if got := LoopbackHost(host); got != want {
			t.Errorf("LoopbackHost(%q) = %v, want %v", host, got, want)
		}
	}
}
