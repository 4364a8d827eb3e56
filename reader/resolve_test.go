package reader

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// TestUnresolvedRedirectNamesTheName: a page at an address that redirects
// to a name that does not resolve fails naming that name, not the first
// hop's address.
func TestUnresolvedRedirectNamesTheName(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://gone.test/page", http.StatusFound)
	}))
	t.Cleanup(srv.Close)
	r, _ := publicReader(t, srv, nil)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	_, err := r.Read(context.Background(), Request{URL: "http://" + publicIP + ":" + port + "/start"})
	if !errors.Is(err, ErrUnreachable) || !strings.Contains(err.Error(), "gone.test does not resolve") || strings.Contains(err.Error(), publicIP) {
		t.Fatalf("%v; want gone.test named as the name that does not resolve", err)
	}
}
