package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

const healthcheckUsage = `Usage: searxgate healthcheck [flags]

Asks the searxgate serving on --listen for /healthz and exits 0 when it
answers 200 OK, else 1. Made for a container's HEALTHCHECK, where there is
no shell or curl: it reads the address from SEARXGATE_LISTEN as serve does,
and dials 127.0.0.1 when searxgate listens on every address (0.0.0.0, ::).

Flags (each also read from its environment variable; a flag wins):
`

// healthcheckCommand runs searxgate healthcheck. Every failure, a bad flag
// among them, exits 1: container runtimes read 0 as healthy and 1 as
// unhealthy, and keep 2 for themselves.
func healthcheckCommand(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	listen := defaultConfig().Listen
	if v := getenv(envName("listen")); v != "" {
		listen = v
	}
	timeout := 3 * time.Second
	fs := flag.NewFlagSet("searxgate healthcheck", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&listen, "listen", listen, "the address searxgate serves on, as given to serve (env "+envName("listen")+")")
	fs.DurationVar(&timeout, "timeout", timeout, "how long to wait for the answer")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprint(stdout, healthcheckUsage)
			printFlagDefaults(stdout, fs)
			return 0
		}
		fmt.Fprintf(stderr, "searxgate healthcheck: %v (searxgate healthcheck --help lists the flags)\n", err)
		return 1
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(stderr, "searxgate healthcheck: unexpected argument %q (flags start with --)\n", fs.Arg(0))
		return 1
	}
	url, err := healthURL(listen)
	if err != nil {
		fmt.Fprintf(stderr, "searxgate healthcheck: --listen (%s): %v\n", envName("listen"), err)
		return 1
	}
	if err := checkHealth(ctx, url, timeout); err != nil {
		fmt.Fprintf(stderr, "searxgate healthcheck: %s: %v\n", url, err)
		return 1
	}
	fmt.Fprintf(stdout, "searxgate healthcheck: %s: OK\n", url)
	return 0
}

// healthURL is the /healthz URL of a searxgate listening on listen: an
// unspecified host (":8888", "0.0.0.0:8888", "[::]:8888") is reached on
// 127.0.0.1, which an IPv6 wildcard socket accepts too.
func healthURL(listen string) (string, error) {
	host, port, err := net.SplitHostPort(listen)
	if err != nil {
		return "", fmt.Errorf("%q is not host:port", listen)
	}
	if port == "0" {
		return "", fmt.Errorf("%q has port 0, which picks a port at start: give the port serve uses", listen)
	}
	switch host {
	case "", "0.0.0.0", "::", "0:0:0:0:0:0:0:0":
		host = "127.0.0.1"
	}
	return "http://" + net.JoinHostPort(host, port) + "/healthz", nil
}

// checkHealth GETs url within timeout and wants 200 with the body OK. It
// uses no proxy from the environment: the address is this machine's.
func checkHealth(ctx context.Context, url string, timeout time.Duration) error {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return err
	}
	req.Header.Set("User-Agent", "searxgate-healthcheck/"+Version)
	client := &http.Client{
		Transport: &http.Transport{Proxy: nil, DisableKeepAlives: true},
		// A redirect is not health.
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("no answer within %v", timeout)
		}
		return err
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 64))
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("answered %s", resp.Status)
	}
	if strings.TrimSpace(string(body)) != "OK" {
		return fmt.Errorf("answered 200 but not OK: %q", body)
	}
	return nil
}

// printFlagDefaults lists fs's flags as --name, with their defaults: the
// flag package's own listing shows one dash.
func printFlagDefaults(w io.Writer, fs *flag.FlagSet) {
	fs.VisitAll(func(f *flag.Flag) {
		name, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if name != "" {
			line += " " + name
		}
		fmt.Fprintln(w, line)
		fmt.Fprintf(w, "      %s", usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}
