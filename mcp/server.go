package mcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/client"
	"github.com/searxgate/searxgate/proxy"
	"github.com/searxgate/searxgate/reader"
	"github.com/searxgate/searxgate/results"
)

// Searcher answers searches; *proxy.Proxy is one.
type Searcher interface {
	Search(ctx context.Context, req proxy.Request) (*proxy.Response, error)
}

// Reader reads pages; *reader.Reader is one.
type Reader interface {
	Read(ctx context.Context, req reader.Request) (*reader.Result, error)
}

// Suggester completes queries from the instances' autocompleters, within
// their own budget; *proxy.Proxy is one.
type Suggester interface {
	Autocomplete(ctx context.Context, q, language string) ([]string, error)
}

// Pool shows the instances as the search path sees them; *proxy.Proxy is
// one.
type Pool interface {
	Instances(now time.Time) []proxy.Instance
}

// Config is what the MCP face needs.
type Config struct {
	Search  Searcher
	Read    Reader    // nil: web_url_read is not offered
	Suggest Suggester // nil: searxng_search_suggestions is not offered
	Pool    Pool      // nil: searxng_instance_info is not offered
	// Admit, when set, is asked for each suggestion (the per-client limit
	// /autocompleter has), with the client's key.
	Admit func(client string, now time.Time) (bool, time.Duration)
	// Now tells the time; nil is time.Now.
	Now     func() time.Time
	Version string
	Logger  *slog.Logger
	// Token, when set, is required as "Authorization: Bearer <token>".
	Token string
	// Exposed says searxgate can be reached beyond loopback (a non-loopback
	// listen address, a reverse proxy, a public URL): then /mcp without a
	// Token is refused, since web_url_read would make searxgate an open
	// fetcher.
	Exposed bool
	// Origins are the browser origins allowed besides loopback ones
	// (scheme://host[:port], e.g. the public URL's); any other Origin is
	// refused (DNS-rebinding protection).
	Origins []string
	// Client names the client of a request for the per-client limit and
	// fair share (proxy.Request.Client, reader.Request.Client): its
	// client key (client.OfHTTP with the trusted proxies); nil = the
	// peer's key.
	Client func(r *http.Request) string
	// DefaultMaxLength is what web_url_read returns at most when maxLength
	// is not given (default 20,000 characters).
	DefaultMaxLength int
}

// Server is searxgate's MCP face: the tools and their HTTP handler.
type Server struct {
	cfg     Config
	log     *slog.Logger
	sdk     *sdk.Server
	handler http.Handler
	counts  *counter
	callers callers // the HTTP requests being served, for their tools
	// forwardedOnce says once that a forwarded request was refused.
	forwardedOnce sync.Once
}

// clientHeader carries the client's key from the access layer to the tools
// (the SDK hands tools the request's header). Whatever a client sends under
// this name is replaced.
const clientHeader = "X-Searxgate-Internal-Client"

// New returns the MCP face.
func New(cfg Config) *Server {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Client == nil {
		cfg.Client = client.OfHTTP(nil)
	}
	if cfg.DefaultMaxLength <= 0 {
		cfg.DefaultMaxLength = 20_000
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, log: cfg.Logger, counts: newCounter()}
	sdkLog := quiet(cfg.Logger)
	s.sdk = newSDKServer(cfg.Version, sdkLog)
	h := handlers{search: s.search}
	if cfg.Read != nil {
		h.read = s.read
	}
	if cfg.Suggest != nil {
		h.suggest = s.suggest
	}
	if cfg.Pool != nil {
		h.info = s.info
	}
	addTools(s.sdk, s.counted(h))
	if cfg.Pool != nil {
		r := statusResource
		s.sdk.AddResource(&r, s.status)
	}
	streamable := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return s.sdk },
		&sdk.StreamableHTTPOptions{
			Stateless: true,
			// One JSON answer per request: nothing to stream (no
			// server-initiated messages), and it passes through any
			// adaptor or proxy that buffers.
			JSONResponse:        true,
			Logger:              sdkLog,
			MaxRequestBodyBytes: 64 << 10,
			// A tool call ends when its request does (newer protocol
			// versions; withCaller does it for the older ones).
			PropagateRequestCancellation: true,
			// Done by access below, which also knows the public URL and
			// works behind the fasthttp adaptor (no local address there).
			DisableLocalhostProtection: true,
		})
	s.handler = s.access(streamable)
	return s
}

// newSDKServer is the SDK server both the gateway and the bridge use.
func newSDKServer(version string, log *slog.Logger) *sdk.Server {
	return sdk.NewServer(&sdk.Implementation{Name: "searxgate", Title: "searxgate", Version: version},
		&sdk.ServerOptions{
			// The released revisions (2025-11-25 and older, 2025-06-18
			// among them): what clients negotiate today. A draft is
			// answered with the newest of these.
			SupportedProtocolVersions: released(),
			Logger:                    log,
			// No listChanged, no subscriptions: the endpoint is stateless
			// and sends no notifications.
			Capabilities: &sdk.ServerCapabilities{Tools: &sdk.ToolCapabilities{}, Resources: &sdk.ResourceCapabilities{}},
			Instructions: instructions,
		})
}

// instructions tell the model how the tools fit together.
const instructions = "searxgate searches the web through a pool of SearXNG instances (searxng_web_search) and reads " +
	"pages as Markdown with their title, author, date and canonical URL (web_url_read). searxng_search_suggestions " +
	"completes a vague query; searxng_instance_info lists the categories and engines the instances offer. " +
	"Repeated searches and reads are served from its cache; when a tool says to retry in N seconds, wait that long."

// quiet is log for the SDK: warnings and errors only (it reports every
// stateless session's start and end at INFO: two lines per request).
func quiet(log *slog.Logger) *slog.Logger {
	return slog.New(minLevel{Handler: log.Handler(), min: slog.LevelWarn})
}

type minLevel struct {
	slog.Handler
	min slog.Level
}

func (h minLevel) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= h.min && h.Handler.Enabled(ctx, l)
}

func (h minLevel) WithAttrs(a []slog.Attr) slog.Handler {
	return minLevel{Handler: h.Handler.WithAttrs(a), min: h.min}
}

func (h minLevel) WithGroup(name string) slog.Handler {
	return minLevel{Handler: h.Handler.WithGroup(name), min: h.min}
}

// newestReleased is the newest MCP revision searxgate speaks.
const newestReleased = "2025-11-25"

func released() []string {
	return slices.DeleteFunc(sdk.SupportedProtocolVersions(), func(v string) bool { return v > newestReleased })
}

// Handler serves MCP over Streamable HTTP (POST; stateless; JSON answers).
func (s *Server) Handler() http.Handler { return s.handler }

// search runs searxng_web_search through the proxy, as /search does.
func (s *Server) search(ctx context.Context, req *sdk.CallToolRequest, in SearchArgs) (*sdk.CallToolResult, SearchOutput, error) {
	p := args{"q": in.Query, "format": proxy.FormatJSON}
	if in.PageNo != 0 {
		p["pageno"] = strconv.Itoa(in.PageNo)
	}
	if in.TimeRange != "" {
		p["time_range"] = in.TimeRange
	}
	if l := in.Language; l != "" && l != "all" {
		p["language"] = l
	}
	if in.SafeSearch != nil {
		p["safesearch"] = strconv.Itoa(int(*in.SafeSearch))
	}
	if in.Categories != "" {
		p["categories"] = in.Categories
	}
	if in.Engines != "" {
		p["engines"] = in.Engines
	}
	if in.Fanout > 0 {
		p["fanout"] = strconv.Itoa(in.Fanout)
	}
	preq, err := proxy.ParseRequest(p)
	if err != nil {
		return nil, SearchOutput{}, &toolError{msg: "invalid arguments: " + err.Error(), outcome: OutcomeInvalid}
	}
	preq.Client = clientOf(req)
	res, err := s.cfg.Search.Search(ctx, preq)
	if err != nil {
		return nil, SearchOutput{}, searchError(err)
	}
	out, err := searchOutput(preq, res)
	if err != nil {
		s.log.Error("an answer does not decode", "err", err)
		return nil, SearchOutput{}, &toolError{msg: "searxgate could not read the answer; retry", outcome: OutcomeFailed}
	}
	out = shape(out, in)
	text := ""
	if in.ResponseFormat == "json" {
		text = indented(out)
	} else if in.ResultDetail == "compact" {
		text = renderCompact(out)
	} else {
		text = renderSearch(out)
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: text}}}, out, nil
}

// shape applies what the agent asked of the results: min_score, then
// num_results, then the detail.
func shape(o SearchOutput, in SearchArgs) SearchOutput {
	if in.MinScore != nil && *in.MinScore > 0 {
		o.Results = slices.DeleteFunc(o.Results, func(r SearchResult) bool { return r.Score < *in.MinScore })
	}
	if in.NumResults > 0 && len(o.Results) > in.NumResults {
		o.Results = o.Results[:in.NumResults]
	}
	if in.ResultDetail == "compact" {
		for i, r := range o.Results {
			o.Results[i] = SearchResult{Title: r.Title, URL: r.URL, Content: r.Content}
		}
		o.Answers, o.Corrections, o.Suggestions, o.Infoboxes = nil, nil, nil, nil
	}
	return o
}

// noResults says why an answer has no results: the engines that failed on
// the query, when some did (the query's doing, not the instances'), or
// that nothing matched.
func noResults(o SearchOutput) string {
	if len(o.UnresponsiveEngines) == 0 {
		return fmt.Sprintf("No results for %q. Try other words, another language or fewer filters.", o.Query)
	}
	return fmt.Sprintf("No results for %q: these engines failed on it: %s. The query is the cause, not the instances: "+
		"the same engines fail on it whichever instance asks them. Try other words or other engines, or retry later.",
		o.Query, strings.Join(o.UnresponsiveEngines, "; "))
}

// indented is v as indented JSON, for response_format json.
func indented(v any) string {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return "{}"
	}
	return string(b)
}

// renderCompact writes three lines per result, as mcp-searxng's compact
// text does, and nothing else but the engines that failed, when some did.
func renderCompact(o SearchOutput) string {
	if len(o.Results) == 0 {
		return noResults(o)
	}
	var b strings.Builder
	for i, r := range o.Results {
		if i > 0 {
			b.WriteString("\n\n")
		}
		fmt.Fprintf(&b, "Title: %s\nDescription: %s\nURL: %s", oneLine(r.Title), oneLine(r.Content), r.URL)
	}
	if note := enginesNote(o.UnresponsiveEngines); note != "" {
		b.WriteString("\n" + strings.TrimRight(note, "\n"))
	}
	return b.String()
}

// args adapts a map to proxy.Params.
type args map[string]string

func (a args) Get(name string) (string, bool) {
	v, ok := a[name]
	return v, ok
}

// searchOutput turns an answer into the tool's structured output.
func searchOutput(req proxy.Request, res *proxy.Response) (SearchOutput, error) {
	r, err := res.Results()
	if err != nil {
		return SearchOutput{}, err
	}
	out := SearchOutput{Query: req.Query, PageNo: req.PageNo, Instance: res.Instance, Fanout: res.Fanout, Cached: res.Cached || res.Stale,
		Results: make([]SearchResult, 0, len(r.Results)), Answers: results.ClassicAnswers(r.Answers), Corrections: r.Corrections, Suggestions: r.Suggestions}
	for _, x := range r.Results {
		out.Results = append(out.Results, SearchResult{Title: x.Title, URL: x.URL, Content: x.Content,
			Engine: x.Engine, Engines: x.Engines, Score: x.Score, Category: x.Category, PublishedDate: x.PublishedDate,
			Thumbnail: x.Thumbnail, ImgSrc: x.ImgSrc})
	}
	for _, ib := range r.Infoboxes {
		box := Infobox{Title: ib.Infobox, Content: ib.Content}
		for _, u := range ib.URLs {
			box.URLs = append(box.URLs, Link{Title: u.Title, URL: u.URL})
		}
		for _, a := range ib.Attributes {
			box.Attributes = append(box.Attributes, Attribute{Label: a.Label, Value: a.Value})
		}
		out.Infoboxes = append(out.Infoboxes, box)
	}
	for _, e := range r.UnresponsiveEngines {
		out.UnresponsiveEngines = append(out.UnresponsiveEngines, e[0]+": "+e[1])
	}
	out.Thin = res.Thin()
	return out, nil
}

// renderSearch writes the answer as text an LLM reads well.
func renderSearch(o SearchOutput) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Search results for %q", o.Query)
	if o.PageNo > 1 {
		fmt.Fprintf(&b, " (page %d)", o.PageNo)
	}
	fmt.Fprintf(&b, ", answered by %s", o.Instance)
	if o.Cached {
		b.WriteString(" (from searxgate's cache)")
	}
	b.WriteString(".\n")
	if o.Thin != "" {
		fmt.Fprintf(&b, "A thin answer: %s.\n", o.Thin)
	}
	for _, a := range o.Answers {
		fmt.Fprintf(&b, "\nAnswer: %s\n", a)
	}
	if len(o.Corrections) > 0 {
		fmt.Fprintf(&b, "\nDid you mean: %s\n", strings.Join(o.Corrections, "; "))
	}
	for _, ib := range o.Infoboxes {
		fmt.Fprintf(&b, "\nInfobox: %s\n", ib.Title)
		if ib.Content != "" {
			fmt.Fprintf(&b, "%s\n", ib.Content)
		}
		for _, a := range ib.Attributes {
			fmt.Fprintf(&b, "- %s: %s\n", a.Label, a.Value)
		}
		for _, u := range ib.URLs {
			fmt.Fprintf(&b, "- %s: %s\n", u.Title, u.URL)
		}
	}
	if len(o.Results) == 0 {
		b.WriteString("\n" + noResults(o) + "\n")
	}
	for i, r := range o.Results {
		fmt.Fprintf(&b, "\n%d. %s\n   %s\n", i+1, oneLine(r.Title), r.URL)
		if r.PublishedDate != "" {
			fmt.Fprintf(&b, "   Published: %s\n", r.PublishedDate)
		}
		if c := oneLine(r.Content); c != "" {
			fmt.Fprintf(&b, "   %s\n", c)
		}
		var meta []string
		if len(r.Engines) > 0 {
			meta = append(meta, "Engines: "+strings.Join(r.Engines, ", "))
		} else if r.Engine != "" {
			meta = append(meta, "Engine: "+r.Engine)
		}
		if r.Score > 0 {
			meta = append(meta, fmt.Sprintf("Score: %.2f", r.Score))
		}
		if len(meta) > 0 {
			fmt.Fprintf(&b, "   %s\n", strings.Join(meta, " · "))
		}
	}
	if len(o.Suggestions) > 0 {
		fmt.Fprintf(&b, "\nRelated searches: %s\n", strings.Join(o.Suggestions, "; "))
	}
	if len(o.Results) > 0 {
		b.WriteString(enginesNote(o.UnresponsiveEngines))
	}
	return strings.TrimRight(b.String(), "\n")
}

// enginesNote says, under results, which engines failed or were
// suspended on the search ("" when none did): the results come from the
// others, and may miss what those would have found.
func enginesNote(failed []string) string {
	if len(failed) == 0 {
		return ""
	}
	var down, suspended []string
	for _, e := range failed {
		if _, why, _ := strings.Cut(e, ": "); strings.HasPrefix(strings.ToLower(why), "suspended") {
			suspended = append(suspended, e)
		} else {
			down = append(down, e)
		}
	}
	var b strings.Builder
	b.WriteString("\nNot every engine answered; these results come from the others.")
	if len(down) > 0 {
		b.WriteString("\nEngines that failed on this search: " + strings.Join(down, "; ") + ".")
	}
	if len(suspended) > 0 {
		b.WriteString("\nEngines suspended by the instance (they refused it lately): " + strings.Join(suspended, "; ") + ".")
	}
	return b.String() + "\n"
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

// stopWords say each proxy.Stop to an agent: the one table mcp words them
// in (a test holds it to proxy.Stops).
var stopWords = map[proxy.Stop]string{
	proxy.StopDeadline:     "no instance answered in time",
	proxy.StopNoInstance:   "every instance is cooling down or unavailable",
	proxy.StopNoSlot:       "no instance can take the search before its deadline (budgets, cooldowns or searches in flight)",
	proxy.StopShare:        "your share of the public instances' budget is spent for now (the rest is kept for other clients)",
	proxy.StopAttempts:     "every instance tried failed",
	proxy.StopNetwork:      "no instance's name resolves: the network of the machine searxgate runs on is down; no instance was blamed",
	proxy.StopBudget:       "your share of the budget for retries and second opinions is spent",
	proxy.StopShutdown:     "searxgate is shutting down",
	proxy.StopQueueFull:    "too many searches are waiting for an instance",
	proxy.StopLeaderFailed: "the identical search this one joined got no answer",
	proxy.StopQuery:        "this query makes SearXNG fail on every instance asked; rephrase it",
	proxy.StopQueryTimeout: "the query's <N timeout asks for longer than searxgate waits; drop it or lower it",
}

// searchError is what the agent reads when a search found no answer.
func searchError(err error) error {
	var lim *proxy.LimitedError
	var na *proxy.NoAnswerError
	switch {
	case errors.As(err, &lim):
		return &toolError{outcome: OutcomeLimited,
			msg: fmt.Sprintf("too many searches from this client; retry in %d s", secs(lim.RetryAfter))}
	case errors.As(err, &na):
		why := stopWords[na.Why]
		if why == "" {
			why = "no instance answered"
		}
		if causes := na.Explain(); len(causes) > 0 {
			why += ". " + strings.Join(causes, ". ")
		}
		if na.RetryAfter > 0 {
			return &toolError{outcome: OutcomeFailed, msg: fmt.Sprintf("%s; retry in %d s", why, secs(na.RetryAfter))}
		}
		if !na.Why.Retryable() {
			return &toolError{outcome: OutcomeFailed, msg: why} // a retry fails alike
		}
		return &toolError{outcome: OutcomeFailed, msg: why + "; retry in a few seconds"}
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return &toolError{outcome: OutcomeFailed, msg: "the search was cancelled"}
	}
	return &toolError{outcome: OutcomeFailed, msg: "search failed: " + err.Error()}
}

func secs(d time.Duration) int { return max(1, int((d+time.Second-1)/time.Second)) }

// read runs web_url_read.
func (s *Server) read(ctx context.Context, req *sdk.CallToolRequest, in ReadArgs) (*sdk.CallToolResult, ReadOutput, error) {
	rr := reader.Request{URL: in.URL, StartChar: in.StartChar, MaxLength: in.MaxLength, Section: in.Section,
		ParagraphRange: in.ParagraphRange, ReadHeadings: in.ReadHeadings, Client: clientOf(req)}
	if rr.MaxLength == 0 {
		rr.MaxLength = s.cfg.DefaultMaxLength
	}
	res, err := s.cfg.Read.Read(ctx, rr)
	if err != nil {
		return nil, ReadOutput{}, readError(err)
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: renderRead(res)}}}, *res, nil
}

func renderRead(r *reader.Result) string {
	var b strings.Builder
	b.WriteString(r.Header())
	b.WriteString("\n")
	if r.Section != "" {
		fmt.Fprintf(&b, "Section: %s\n", r.Section)
	}
	if r.Paragraphs != "" {
		fmt.Fprintf(&b, "Paragraphs: %s of %d\n", r.Paragraphs, r.TotalParagraphs)
	}
	if r.Waited != "" {
		fmt.Fprintf(&b, "Waited: %s\n", r.Waited)
	}
	if r.Headings != nil {
		if len(r.Headings) == 0 {
			b.WriteString("\nThe page has no headings.")
			return b.String()
		}
		fmt.Fprintf(&b, "Headings (read one with section):\n\n%s", r.Content)
		return b.String()
	}
	b.WriteString("\n")
	b.WriteString(r.Content)
	if r.NextChar > 0 {
		fmt.Fprintf(&b, "\n\n[%d of %d characters shown; call web_url_read again with startChar=%d to read on]",
			r.NextChar-r.StartChar, r.TotalChars, r.NextChar)
	}
	return b.String()
}

// readError sorts a reader error into an outcome; its text already says
// what to do.
func readError(err error) error {
	switch {
	case errors.Is(err, reader.ErrBusy), errors.Is(err, reader.ErrLimited), errors.Is(err, reader.ErrQueueFull):
		return &toolError{outcome: OutcomeLimited, msg: err.Error()}
	case errors.Is(err, reader.ErrBadURL), errors.Is(err, reader.ErrPrivate), errors.Is(err, reader.ErrType),
		errors.Is(err, reader.ErrTooLarge), errors.Is(err, reader.ErrNoSection), errors.Is(err, reader.ErrPastEnd),
		errors.Is(err, reader.ErrRange):
		return &toolError{outcome: OutcomeInvalid, msg: err.Error()}
	}
	return &toolError{outcome: OutcomeFailed, msg: err.Error()}
}

// clientOf is the client key the access layer put in the request.
func clientOf(req *sdk.CallToolRequest) string {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return ""
	}
	// A copy: the header's bytes may be the server's, reused after the
	// request, and the proxy keeps the key.
	return strings.Clone(req.Extra.Header.Get(clientHeader))
}
