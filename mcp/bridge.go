package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// BridgeConfig is what the stdio bridge needs.
type BridgeConfig struct {
	// Gateway is the running searxgate's base URL (its /mcp is used).
	Gateway string
	// Token is sent as "Authorization: Bearer <token>" when set.
	Token   string
	Version string
	Logger  *slog.Logger
	// HTTPClient reaches the gateway; nil = one with a 60 s timeout.
	HTTPClient *http.Client
}

// Bridge serves the same tools over t (stdin and stdout, for clients that
// only launch commands) and forwards every call to the gateway's /mcp. It
// connects to the gateway at the first call, and again after a failure, so
// it can be started before the gateway. It returns when t closes or ctx
// ends.
func Bridge(ctx context.Context, cfg BridgeConfig, t sdk.Transport) error {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{Timeout: 60 * time.Second}
	}
	if cfg.Token != "" {
		hc = &http.Client{Timeout: hc.Timeout, Transport: bearer{token: cfg.Token, next: transportOf(hc)}}
	}
	b := &bridge{endpoint: strings.TrimSuffix(cfg.Gateway, "/") + "/mcp", http: hc, version: cfg.Version, log: cfg.Logger}
	defer b.close()
	srv := newSDKServer(cfg.Version, quiet(cfg.Logger))
	addTools(srv, handlers{
		search:  forward[SearchArgs, SearchOutput](b, ToolSearch),
		suggest: forward[SuggestArgs, SuggestOutput](b, ToolSuggestions),
		info:    forward[InfoArgs, InfoOutput](b, ToolInfo),
		read:    forward[ReadArgs, ReadOutput](b, ToolRead),
	})
	r := statusResource
	srv.AddResource(&r, b.readResource)
	return srv.Run(ctx, t)
}

type bridge struct {
	endpoint string
	http     *http.Client
	version  string
	log      *slog.Logger

	mu   sync.Mutex // guards sess
	sess *sdk.ClientSession
}

// session is the gateway session, connected if need be.
func (b *bridge) session(ctx context.Context) (*sdk.ClientSession, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sess != nil {
		return b.sess, nil
	}
	c := sdk.NewClient(&sdk.Implementation{Name: "searxgate-bridge", Version: b.version}, nil)
	s, err := c.Connect(ctx, &sdk.StreamableClientTransport{Endpoint: b.endpoint, HTTPClient: b.http,
		DisableStandaloneSSE: true, MaxRetries: -1}, nil)
	if err != nil {
		return nil, err
	}
	b.sess = s
	return s, nil
}

// drop forgets a session that failed, so that the next call reconnects.
func (b *bridge) drop(s *sdk.ClientSession) {
	b.mu.Lock()
	if b.sess == s {
		b.sess = nil
	}
	b.mu.Unlock()
	_ = s.Close()
}

func (b *bridge) close() {
	b.mu.Lock()
	s := b.sess
	b.sess = nil
	b.mu.Unlock()
	if s != nil {
		_ = s.Close()
	}
}

// call forwards one tool call, reconnecting once when the session broke
// (the gateway restarted).
func (b *bridge) call(ctx context.Context, name string, arguments any) (*sdk.CallToolResult, error) {
	res, err := twice(ctx, b, func(s *sdk.ClientSession) (*sdk.CallToolResult, error) {
		return s.CallTool(ctx, &sdk.CallToolParams{Name: name, Arguments: arguments})
	})
	if err != nil {
		return nil, &toolError{outcome: OutcomeFailed,
			msg: fmt.Sprintf("searxgate at %s did not take the call (%v): is it running (searxgate serve), and does --mcp-token match its token?",
				b.endpoint, err)}
	}
	return res, nil
}

// readResource forwards a resource read, reconnecting once as call does.
func (b *bridge) readResource(ctx context.Context, req *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	res, err := twice(ctx, b, func(s *sdk.ClientSession) (*sdk.ReadResourceResult, error) {
		return s.ReadResource(ctx, &sdk.ReadResourceParams{URI: req.Params.URI})
	})
	if err != nil {
		return nil, fmt.Errorf("searxgate at %s did not answer (%v): is it running (searxgate serve), and does --mcp-token match its token?",
			b.endpoint, err)
	}
	return res, nil
}

// twice asks the gateway through the bridge's session, and once more on a
// new session when that one broke; the error is the last one.
func twice[T any](ctx context.Context, b *bridge, ask func(*sdk.ClientSession) (T, error)) (T, error) {
	var zero T
	var lastErr error
	for range 2 {
		s, err := b.session(ctx)
		if err != nil {
			return zero, err
		}
		res, err := ask(s)
		if err == nil {
			return res, nil
		}
		lastErr = err
		b.drop(s)
	}
	return zero, lastErr
}

// forward is a tool handler that asks the gateway and hands its answer on.
func forward[In, Out any](b *bridge, name string) sdk.ToolHandlerFor[In, Out] {
	return func(ctx context.Context, req *sdk.CallToolRequest, in In) (*sdk.CallToolResult, Out, error) {
		var zero Out
		res, err := b.call(ctx, name, in)
		if err != nil {
			return nil, zero, err
		}
		if res.IsError {
			return nil, zero, errors.New(textOf(res))
		}
		var out Out
		if res.StructuredContent != nil {
			raw, err := json.Marshal(res.StructuredContent)
			if err == nil {
				err = json.Unmarshal(raw, &out)
			}
			if err != nil {
				return nil, zero, fmt.Errorf("searxgate's answer does not decode: %v", err)
			}
		}
		return &sdk.CallToolResult{Content: res.Content}, out, nil
	}
}

// textOf joins a result's text content.
func textOf(res *sdk.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		if t, ok := c.(*sdk.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	if len(parts) == 0 {
		return "searxgate answered with an error"
	}
	return strings.Join(parts, "\n")
}

// bearer adds the MCP token to every request to the gateway.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (t bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.Header.Set("Authorization", "Bearer "+t.token)
	return t.next.RoundTrip(r)
}

func transportOf(c *http.Client) http.RoundTripper {
	if c.Transport != nil {
		return c.Transport
	}
	return http.DefaultTransport
}
