package proxy

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/proxy/upstream"
)

// Formats a client may ask for, as SearXNG names them (upstream's).
const (
	FormatHTML = upstream.FormatHTML
	FormatJSON = upstream.FormatJSON
	FormatCSV  = upstream.FormatCSV
	FormatRSS  = upstream.FormatRSS
)

// MaxQueryLen caps the query text, in bytes (16 KiB). SearXNG itself has
// no limit, and clients (agents pasting a passage, a long boolean query)
// send queries of thousands of bytes that SearXNG answers (9,000 bytes is
// a search SearXNG answers 200); past 16 KiB a search is no search a
// person or an agent makes and would only be forwarded to every instance
// we try. A GET must also fit the server's read buffer: the longest
// queries come by POST.
const MaxQueryLen = 16 << 10

// ErrNoQuery is returned by Request.Validate when q is empty; SearXNG
// answers it with {"error": "No query"} and status 400.
var ErrNoQuery = errors.New("No query") //lint:ignore ST1005 SearXNG's own words, which clients compare

// ErrBlankQuery is returned by ParseRequest when q is white space only.
// SearXNG searches it (its check is for an absent or empty q) and answers
// 200 with nothing found; there is nothing an instance could find for it.
var ErrBlankQuery = errors.New("blank query")

// ParamError is SearXNG's SearxParameterException: a parameter with a value
// SearXNG would refuse. Its message is SearXNG's, word for word, because
// clients show it.
type ParamError struct {
	Name, Value string
}

func (e *ParamError) Error() string {
	if e.Value == "" {
		return "Empty " + e.Name + " parameter"
	}
	return `Invalid value "` + e.Value + `" for parameter ` + e.Name
}

// validLanguage is SearXNG's VALID_LANGUAGE_CODE; "auto" is also allowed.
var validLanguage = regexp.MustCompile(`^[a-z]{2,3}(-[a-zA-Z]{2})?$`)

// Request is one SearXNG search, as a client asked it.
type Request struct {
	Query      string
	Categories []string // lower-case, as given; empty = the instance's default
	Engines    []string
	Language   string // "" = the instance's default
	PageNo     int    // 1-based
	TimeRange  string // "", day, week, month, year
	SafeSearch string // "", "0", "1", "2"
	Format     string // html, json, csv, rss
	// TimeoutLimit is SearXNG's timeout_limit as the client gave it
	// ("" = none): forwarded to the instance, and the bound of the
	// search's own time (TimeoutLimitDuration) when positive.
	TimeoutLimit string
	// Client names who asked: its client key as a face made it (package
	// client: an address prefix or an API key), for the per-client
	// admission and the fair share of the upstream budget, read as is. It
	// is not part of Key: two clients asking the same search share one
	// answer.
	Client string
	// Fanout is how many instances to ask at once and merge (0 or 1: one
	// answers; capped by Config.MaxFanout).
	Fanout int
	// Syntax is Query's SearXNG syntax (bangs, :lang, <timeout), read
	// once: by ParseRequest, or by Proxy.Search for a Request built
	// otherwise. Whatever asks what the query's syntax says reads it.
	Syntax detect.Query
}

// Params is how a caller hands the raw parameters to ParseRequest: Get
// returns the value of a parameter and whether it was present.
type Params interface {
	Get(name string) (string, bool)
}

// ParseRequest reads and validates a search the way SearXNG's webadapter
// does. The returned Request is normalised (trimmed lists, defaults set).
// Errors are ErrNoQuery or a *ParamError.
//
// A format SearXNG does not know ("xml", or "JSON": the names are
// case-sensitive) is the HTML page, as SearXNG's webapp does.
func ParseRequest(p Params) (Request, error) {
	var r Request
	r.Format = FormatHTML
	if f, ok := p.Get("format"); ok {
		switch f {
		case FormatHTML, FormatJSON, FormatCSV, FormatRSS:
			r.Format = f
		}
	}
	q, _ := p.Get("q")
	if q == "" {
		return r, ErrNoQuery
	}
	r.Query = strings.TrimSpace(q)
	if r.Query == "" {
		return r, ErrBlankQuery
	}
	if len(r.Query) > MaxQueryLen {
		return r, &ParamError{Name: "q", Value: strings.ToValidUTF8(r.Query[:32], "") + "…"}
	}
	r.Syntax = detect.ParseQuery(r.Query)

	r.PageNo = 1
	if v, ok := p.Get("pageno"); ok {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || !isDigits(v) {
			return r, &ParamError{Name: "pageno", Value: v}
		}
		r.PageNo = n
	}
	if v, ok := p.Get("language"); ok {
		if v != "auto" && !validLanguage.MatchString(v) {
			return r, &ParamError{Name: "language", Value: v}
		}
		r.Language = v
	}
	if v, ok := p.Get("safesearch"); ok {
		if v != "0" && v != "1" && v != "2" {
			return r, &ParamError{Name: "safesearch", Value: v}
		}
		r.SafeSearch = v
	}
	if v, ok := p.Get("time_range"); ok && v != "" && v != "None" {
		switch v {
		case "day", "week", "month", "year":
			r.TimeRange = v
		default:
			return r, &ParamError{Name: "time_range", Value: v}
		}
	}
	// SearXNG's parse_timeout: absent, "" and "None" are no limit; any
	// other value must read as a float (Python's float()).
	if v, ok := p.Get("timeout_limit"); ok && v != "" && v != "None" {
		if _, err := strconv.ParseFloat(strings.TrimSpace(v), 64); err != nil {
			return r, &ParamError{Name: "timeout_limit", Value: v}
		}
		r.TimeoutLimit = strings.TrimSpace(v)
	}
	if v, ok := p.Get("categories"); ok {
		r.Categories = splitList(v)
	}
	if v, ok := p.Get("engines"); ok {
		r.Engines = splitList(v)
	}
	// searxgate's own: how many instances to ask at once and merge (the
	// proxy caps it at its MaxFanout). Not a SearXNG parameter.
	if v, ok := p.Get("fanout"); ok && v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 100 || !isDigits(v) {
			return r, &ParamError{Name: "fanout", Value: v}
		}
		r.Fanout = n
	}
	return r, nil
}

// TimeoutLimitDuration is the search's timeout_limit as a duration, and
// whether it sets one: a positive, finite number of seconds (SearXNG takes
// 0, negative and infinite values too; they bound nothing here).
func (r *Request) TimeoutLimitDuration() (time.Duration, bool) {
	if r.TimeoutLimit == "" {
		return 0, false
	}
	f, err := strconv.ParseFloat(r.TimeoutLimit, 64)
	if err != nil || !(f > 0) || f > 3600 {
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// timeoutGrace is what a search with a timeout_limit is given past it:
// the instance's own work and the network around its engines' time.
const timeoutGrace = 750 * time.Millisecond

// withTimeoutLimit is ctx bounded by r's timeout_limit and timeoutGrace
// when it gives one. The proxy's own deadline still bounds the search: a
// timeout_limit shortens a search, never lengthens it.
func (r *Request) withTimeoutLimit(ctx context.Context) (context.Context, context.CancelFunc) {
	if d, ok := r.TimeoutLimitDuration(); ok {
		return context.WithTimeout(ctx, d+timeoutGrace)
	}
	return ctx, func() {}
}

func isDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// splitList splits SearXNG's comma-separated lists, trimming, lower-casing,
// dropping empties and duplicates, and sorting so that the same set always
// makes the same cache key.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		s = strings.ToLower(strings.TrimSpace(s))
		if s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	slices.Sort(out)
	return out
}

// Key is the normalised request without its output format: two requests
// with the same Key get the same answer, whatever format they want it in.
// The query is kept as typed (not case-folded), so that the answer's
// echoed query is the client's own.
func (r *Request) Key() string {
	var b strings.Builder
	b.Grow(len(r.Query) + 64)
	b.WriteString("s\x00") // autocompletions share the cache under "ac\x00"
	b.WriteString(r.Query)
	b.WriteByte(0)
	b.WriteString(strings.Join(r.Categories, ","))
	b.WriteByte(0)
	b.WriteString(strings.Join(r.Engines, ","))
	b.WriteByte(0)
	b.WriteString(r.Language)
	b.WriteByte(0)
	b.WriteString(strconv.Itoa(r.PageNo))
	b.WriteByte(0)
	b.WriteString(r.TimeRange)
	b.WriteByte(0)
	b.WriteString(r.SafeSearch)
	if r.Fanout > 1 { // a merged answer is another answer
		b.WriteString("\x00f")
		b.WriteString(strconv.Itoa(r.Fanout))
	}
	return b.String()
}

// Each calls f with each of r's SearXNG parameters, in a fixed order, for
// its page pageno (not sent when 1): what an instance is asked and what a
// link to the page carries. The format and the fan-out are not among
// them: they say how to answer, not what to search.
func (r *Request) Each(pageno int, f func(name, value string)) {
	f("q", r.Query)
	if pageno > 1 {
		f("pageno", strconv.Itoa(pageno))
	}
	if len(r.Categories) > 0 {
		f("categories", strings.Join(r.Categories, ","))
	}
	if len(r.Engines) > 0 {
		f("engines", strings.Join(r.Engines, ","))
	}
	if r.Language != "" {
		f("language", r.Language)
	}
	if r.TimeRange != "" {
		f("time_range", r.TimeRange)
	}
	if r.SafeSearch != "" {
		f("safesearch", r.SafeSearch)
	}
	if r.TimeoutLimit != "" {
		f("timeout_limit", r.TimeoutLimit)
	}
}

// Values is r's parameters (see Each) for a link to its page pageno.
func (r *Request) Values(pageno int) url.Values {
	v := url.Values{}
	r.Each(pageno, v.Set)
	return v
}

// acceptLanguage is the Accept-Language searxgate sends upstream for this
// search: derived from the search's language, never the client's header.
func (r *Request) acceptLanguage() string {
	switch l := r.Language; {
	case l == "" || l == "auto" || l == "all":
		return "en-US,en;q=0.9"
	case strings.Contains(l, "-"):
		base, _, _ := strings.Cut(l, "-")
		return l + "," + base + ";q=0.9"
	default:
		return l
	}
}

// Echo is the query an answer echoes: what the answering instance echoed
// when it is the client's query with some of its search syntax left out
// (SearXNG echoes "!fb edge bang" as "edge bang": the bang chose the
// engines, it is not what was searched), the client's query otherwise. An
// instance cannot make the echo say anything the client did not type.
func (r *Request) Echo(upstream string) string {
	if !r.Syntax.HasSyntax() {
		return r.Query // nothing to leave out: an echo of fewer words is not the query's
	}
	echoed := strings.Fields(upstream)
	if len(echoed) == 0 {
		return r.Query
	}
	i, asked := 0, 0
	for kind, tok := range r.Syntax.Words() {
		asked++
		if i < len(echoed) && tok == echoed[i] {
			i++
			continue
		}
		if kind == detect.WordPlain {
			return r.Query
		}
	}
	if len(echoed) >= asked {
		return r.Query
	}
	if i != len(echoed) {
		return r.Query
	}
	return strings.Join(echoed, " ")
}
