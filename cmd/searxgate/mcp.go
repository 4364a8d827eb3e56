package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttpadaptor"

	"github.com/searxgate/searxgate/client"
	"github.com/searxgate/searxgate/mcp"
	"github.com/searxgate/searxgate/reader"
	"github.com/searxgate/searxgate/reader/pdf"
	"github.com/searxgate/searxgate/web"
)

// newMCP builds the MCP face (/mcp): the tools over the proxy and a page
// reader that goes through the same address guard as the instances.
func (a *App) newMCP(trusted []netip.Prefix) (*mcp.Server, fasthttp.RequestHandler) {
	cfg := a.cfg
	rc := reader.Config{AllowPrivate: cfg.ReaderAllowPrivate, UserAgent: userAgent(cfg.Contact),
		CacheTTL: cfg.CacheTTL, NoCache: cfg.noCache(),
		Admit: a.limiter.Admit(), Logger: a.log, Clock: a.clock, Resolver: cfg.resolver, Proxy: cfg.proxyFunc(),
		TLS: a.tls, PDFWorker: pdf.NewWorker(pdf.WorkerConfig{}), QueueBytes: int64(cfg.ReaderQueueMiB) << 20}
	a.reader = reader.New(rc)
	exposed := mcpExposed(cfg)
	if exposed && cfg.MCPToken == "" {
		a.log.Warn("/mcp is off: searxgate can be reached beyond this machine and no --mcp-token (SEARXGATE_MCP_TOKEN) is set")
	}
	srv := mcp.New(mcp.Config{
		Search: a.proxy, Read: a.reader, Suggest: a.proxy, Pool: a.proxy.Instances(), Admit: a.limiter.Admit(), Now: a.clock.Now,
		Version: Version, Logger: a.log,
		Token: cfg.MCPToken, Exposed: exposed, Origins: mcpOrigins(cfg),
		Client: client.OfHTTP(trusted),
	})
	// A tool call ends when its client closes the connection (an agent
	// cancelled it, the stdio bridge's request was cancelled, a proxy in
	// front gave up): a PDF waiting for a worker leaves the queue, one in
	// a worker has its child killed.
	a.peers = newPeers(a.clock)
	inner := srv.Handler()
	h := fasthttpadaptor.NewFastHTTPHandler(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		// Not derived from the request's own context, fasthttp's
		// RequestCtx, which is reused once the handler returns: nothing
		// below needs its values (the client is named from the request).
		ctx, stop := a.peers.watch(context.Background(), r.RemoteAddr)
		defer stop()
		inner.ServeHTTP(w, r.WithContext(ctx))
	}))
	return srv, h
}

// toolCalls is web.Config.ToolCalls: the MCP face's counts.
func (a *App) toolCalls() []web.ToolCalls {
	counts := a.mcp.Counts()
	out := make([]web.ToolCalls, len(counts))
	for i, c := range counts {
		out[i] = web.ToolCalls{Tool: c.Tool, Outcome: c.Outcome, N: c.N}
	}
	return out
}

// mcpExposed reports whether searxgate can be reached from beyond this
// machine: it listens on an address that is not loopback, sits behind a
// reverse proxy (--trust-proxy), or has a public URL (any: who sets one
// means it to be reached by it). Then /mcp needs --mcp-token. A request
// that says a proxy forwarded it is taken as remote too (mcp's access).
func mcpExposed(cfg Config) bool {
	host, _, err := net.SplitHostPort(cfg.Listen)
	if err != nil || !client.LoopbackHost(host) {
		return true
	}
	if len(cfg.TrustProxy) > 0 {
		return true
	}
	return cfg.PublicURL != ""
}

// mcpOrigins are the browser origins allowed at /mcp besides loopback
// ones: the public URL's.
func mcpOrigins(cfg Config) []string {
	if cfg.PublicURL == "" {
		return nil
	}
	u, err := url.Parse(cfg.PublicURL)
	if err != nil {
		return nil
	}
	return []string{u.Scheme + "://" + u.Host}
}

const mcpUsage = `Usage: searxgate mcp [flags]

Speaks MCP on standard input and output, for clients that launch a command,
and forwards every tool call to a running searxgate.

Flags (each also read from its environment variable; a flag wins):
`

// mcpCommand runs the stdio bridge: MCP on in and out, forwarded to the
// gateway.
func mcpCommand(ctx context.Context, args []string, in io.ReadCloser, out io.WriteCloser, stderr io.Writer, getenv func(string) string) int {
	// The help shows the built-in defaults, never a token from the
	// environment: the variables fill in what no flag set, after parsing.
	var gateway, token string
	fs := flag.NewFlagSet("searxgate mcp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.StringVar(&gateway, "gateway", "http://127.0.0.1:8888", "the running searxgate's address (env SEARXGATE_GATEWAY)")
	fs.StringVar(&token, "mcp-token", "", "its MCP token, when it has one (env SEARXGATE_MCP_TOKEN)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			// Standard output is the protocol's only when serving.
			fmt.Fprint(stderr, mcpUsage)
			printFlagDefaults(stderr, fs)
			return 0
		}
		fmt.Fprintf(stderr, "searxgate mcp: %s (searxgate mcp --help lists the flags)\n", strings.Replace(err.Error(), " -", " --", 1))
		return 2
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	if v := getenv("SEARXGATE_GATEWAY"); v != "" && !set["gateway"] {
		gateway = v
	}
	if v := getenv("SEARXGATE_MCP_TOKEN"); v != "" && !set["mcp-token"] {
		token = v
	}
	if u, err := url.Parse(gateway); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		fmt.Fprintf(stderr, "searxgate mcp: --gateway (SEARXGATE_GATEWAY): %q is not an http(s) URL\n", gateway)
		return 2
	}
	// Standard output carries the protocol: logs go to standard error.
	log := slog.New(slog.NewTextHandler(stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	err := mcp.Bridge(ctx, mcp.BridgeConfig{Gateway: gateway, Token: token, Version: Version, Logger: log},
		&sdk.IOTransport{Reader: in, Writer: out})
	if err != nil && !errors.Is(err, context.Canceled) && !errors.Is(err, io.EOF) {
		fmt.Fprintln(stderr, "searxgate mcp:", err)
		return 1
	}
	return 0
}
