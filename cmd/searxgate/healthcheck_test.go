package main

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestHealthURL(t *testing.T) {
	for _, tc := range []struct {
		listen, want, err string
	}{
		{"127.0.0.1:8888", "http://127.0.0.1:8888/healthz", ""},
		{"0.0.0.0:8888", "http://127.0.0.1:8888/healthz", ""},
		{":8888", "http://127.0.0.1:8888/healthz", ""},
		{"[::]:8888", "http://127.0.0.1:8888/healthz", ""},
		{"[::1]:9000", "http://[::1]:9000/healthz", ""},
		{"localhost:8080", "http://localhost:8080/healthz", ""},
		{"192.0.2.7:8888", "http://192.0.2.7:8888/healthz", ""},
		{"8888", "", "not host:port"},
		{"127.0.0.1:0", "", "port 0"},
	} {
		got, err := healthURL(tc.listen)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("healthURL(%q) = %q, %v; want an error saying %q", tc.listen, got, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("healthURL(%q) = %q, %v; want %q", tc.listen, got, err, tc.want)
		}
	}
}

// runHealthcheck runs searxgate healthcheck with args and env.
func runHealthcheck(args []string, vars map[string]string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = Main(context.Background(), append([]string{"healthcheck"}, args...), &out, &errb, env(vars))
	return code, out.String(), errb.String()
}

// TestHealthcheckGateway: against a running searxgate the check passes,
// whether it is given the address by flag, by SEARXGATE_LISTEN, or as the
// wildcard address a container listens on (dialled on 127.0.0.1).
func TestHealthcheckGateway(t *testing.T) {
	g := startGateway(t, "none", "")
	_, port, err := net.SplitHostPort(g.addr)
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		vars map[string]string
	}{
		{"flag", []string{"--listen", g.addr}, nil},
		{"env", nil, map[string]string{"SEARXGATE_LISTEN": g.addr}},
		{"wildcard", nil, map[string]string{"SEARXGATE_LISTEN": "0.0.0.0:" + port}},
		{"empty host", []string{"--listen", ":" + port}, nil},
		{"flag over env", []string{"--listen", g.addr}, map[string]string{"SEARXGATE_LISTEN": "127.0.0.1:1"}},
	} {
		code, stdout, stderr := runHealthcheck(tc.args, tc.vars)
		if code != 0 || !strings.Contains(stdout, "OK") {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 0 and OK", tc.name, code, stdout, stderr)
		}
	}
}

// TestHealthcheckFails: anything but 200 OK from /healthz, no listener, no
// answer in time and a bad flag all exit 1 (never 2, which container
// runtimes keep for themselves), saying why.
func TestHealthcheckFails(t *testing.T) {
	serve := func(status int, body string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/healthz" {
				http.NotFound(w, r)
				return
			}
			w.WriteHeader(status)
			_, _ = w.Write([]byte(body))
		}))
		t.Cleanup(srv.Close)
		return srv.Listener.Addr().String()
	}
	// A port nothing listens on: bound, then closed.
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	closed := ln.Addr().String()
	_ = ln.Close()
	// A listener that accepts and never answers.
	mute, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = mute.Close() })
	go func() {
		for {
			c, err := mute.Accept()
			if err != nil {
				return
			}
			t.Cleanup(func() { _ = c.Close() })
		}
	}()

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"503", []string{"--listen", serve(503, "down")}, "503"},
		{"200 not OK", []string{"--listen", serve(200, "<html>")}, "not OK"},
		{"nothing listens", []string{"--listen", closed}, "refused"},
		{"no answer", []string{"--listen", mute.Addr().String(), "--timeout", "50ms"}, "no answer within 50ms"},
		{"not host:port", []string{"--listen", "8888"}, "--listen (SEARXGATE_LISTEN)"},
		{"bad flag", []string{"--nope"}, "-nope"},
		{"argument", []string{"extra"}, "unexpected argument"},
	} {
		code, stdout, stderr := runHealthcheck(tc.args, nil)
		if code != 1 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want 1 and %q", tc.name, code, stdout, stderr, tc.want)
		}
	}
}

func TestHealthcheckHelp(t *testing.T) {
	code, stdout, stderr := runHealthcheck([]string{"--help"}, nil)
	if code != 0 || stderr != "" {
		t.Fatalf("exit %d, stderr %q", code, stderr)
	}
	for _, want := range []string{"Usage: searxgate healthcheck", "\n  --listen string\n", "\n  --timeout duration\n", "(default 3s)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("help lacks %q:\n%s", want, stdout)
		}
	}
}
