package mcp

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/reader"
)

// Tool names, as mcp-searxng names them, so that prompts written for it
// carry over.
const (
	ToolSearch      = "searxng_web_search"
	ToolSuggestions = "searxng_search_suggestions"
	ToolInfo        = "searxng_instance_info"
	ToolRead        = "web_url_read"
)

// SearchArgs are searxng_web_search's arguments: mcp-searxng's, and
// fanout.
type SearchArgs struct {
	Query      string      `json:"query"`
	PageNo     int         `json:"pageno,omitempty"`
	TimeRange  string      `json:"time_range,omitempty"`
	Language   string      `json:"language,omitempty"`
	SafeSearch *SafeSearch `json:"safesearch,omitempty"`
	Categories string      `json:"categories,omitempty"`
	Engines    string      `json:"engines,omitempty"`
	// NumResults keeps the first n results (0: all the answer has).
	NumResults int `json:"num_results,omitempty"`
	// MinScore drops results whose SearXNG score is below it.
	MinScore *float64 `json:"min_score,omitempty"`
	// ResponseFormat is how the text content is written: text (default)
	// or json (the structured answer, indented).
	ResponseFormat string `json:"response_format,omitempty"`
	// ResultDetail is full (default) or compact: title, URL and snippet
	// only.
	ResultDetail string `json:"result_detail,omitempty"`
	Fanout       int    `json:"fanout,omitempty"`
}

// SafeSearch is safesearch as either client writes it: the integer 0 to 2
// or mcp-searxng's string "0" to "2". It is written as the integer.
type SafeSearch int

// UnmarshalJSON reads 0, 1, 2 or "0", "1", "2".
func (s *SafeSearch) UnmarshalJSON(b []byte) error {
	b = bytes.TrimSpace(b)
	if len(b) > 0 && b[0] == '"' {
		var str string
		if err := json.Unmarshal(b, &str); err != nil {
			return err
		}
		b = []byte(str)
	}
	n, err := strconv.Atoi(string(b))
	if err != nil || n < 0 || n > 2 {
		return fmt.Errorf("safesearch must be 0, 1 or 2 (or \"0\", \"1\", \"2\"), not %s", b)
	}
	*s = SafeSearch(n)
	return nil
}

// SearchOutput is searxng_web_search's structured answer.
type SearchOutput struct {
	Query               string         `json:"query"`
	PageNo              int            `json:"pageno"`
	Instance            string         `json:"instance" jsonschema:"the SearXNG instance that answered (several, comma-separated, for a fan-out)"`
	Fanout              string         `json:"fanout,omitempty" jsonschema:"instances asked/answered, for a fan-out"`
	Cached              bool           `json:"cached" jsonschema:"whether searxgate answered from its cache"`
	Results             []SearchResult `json:"results"`
	Answers             []string       `json:"answers,omitempty"`
	Corrections         []string       `json:"corrections,omitempty"`
	Suggestions         []string       `json:"suggestions,omitempty"`
	Infoboxes           []Infobox      `json:"infoboxes,omitempty"`
	UnresponsiveEngines []string       `json:"unresponsive_engines,omitempty"`
	// Thin says why the answer is thin, "" when it is not.
	Thin string `json:"thin,omitempty" jsonschema:"why the answer is thin: engines suspended on the instance that answered, and how many results came from which"`
}

// SearchResult is one result. A compact answer has only its title, URL
// and content.
type SearchResult struct {
	Title         string   `json:"title"`
	URL           string   `json:"url"`
	Content       string   `json:"content,omitempty"`
	Engine        string   `json:"engine,omitempty"`
	Engines       []string `json:"engines,omitempty"`
	Score         float64  `json:"score,omitempty" jsonschema:"SearXNG's relevance score (higher is better; not bounded to 1)"`
	Category      string   `json:"category,omitempty"`
	PublishedDate string   `json:"published_date,omitempty"`
	Thumbnail     string   `json:"thumbnail,omitempty"`
	ImgSrc        string   `json:"img_src,omitempty"`
}

// Infobox is one infobox (a summary of the query's subject).
type Infobox struct {
	Title      string      `json:"title"`
	Content    string      `json:"content,omitempty"`
	URLs       []Link      `json:"urls,omitempty"`
	Attributes []Attribute `json:"attributes,omitempty"`
}

// Link is one link of an infobox.
type Link struct {
	Title string `json:"title"`
	URL   string `json:"url"`
}

// Attribute is one row of an infobox.
type Attribute struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// ReadArgs are web_url_read's arguments.
type ReadArgs struct {
	URL            string `json:"url"`
	MaxLength      int    `json:"maxLength,omitempty"`
	StartChar      int    `json:"startChar,omitempty"`
	Section        string `json:"section,omitempty"`
	ParagraphRange string `json:"paragraphRange,omitempty"`
	ReadHeadings   bool   `json:"readHeadings,omitempty"`
}

// SuggestArgs are searxng_search_suggestions' arguments.
type SuggestArgs struct {
	Query    string `json:"query"`
	Language string `json:"language,omitempty"`
}

// SuggestOutput is searxng_search_suggestions' structured answer.
type SuggestOutput struct {
	Query       string   `json:"query"`
	Suggestions []string `json:"suggestions"`
}

// InfoArgs are searxng_instance_info's arguments, as mcp-searxng names
// them.
type InfoArgs struct {
	IncludeEngines  bool   `json:"includeEngines,omitempty"`
	IncludeDisabled bool   `json:"includeDisabled,omitempty"`
	Category        string `json:"category,omitempty"`
	Refresh         bool   `json:"refresh,omitempty"`
}

// InfoOutput is searxng_instance_info's structured answer: what the pool's
// instances offer, from their /config, and the pool in brief.
type InfoOutput struct {
	Categories Offered     `json:"categories" jsonschema:"common: offered by every instance whose /config was read; available: by at least one"`
	Engines    *EngineSets `json:"engines,omitempty" jsonschema:"with includeEngines"`
	Pool       PoolBrief   `json:"pool"`
	Notes      []string    `json:"notes,omitempty"`
}

// Offered is what every instance offers (Common) and what some do
// (Available).
type Offered struct {
	Common    []string `json:"common"`
	Available []string `json:"available"`
}

// EngineSets are the engines offered, in mcp-searxng's shape.
type EngineSets struct {
	Common    EngineNames `json:"common"`
	Available EngineNames `json:"available"`
}

// EngineNames are engine names; searxgate learns only the enabled ones.
type EngineNames struct {
	Enabled []string `json:"enabled"`
}

// PoolBrief is searxgate's pool in a few numbers.
type PoolBrief struct {
	Instances    int `json:"instances" jsonschema:"instances in the pool"`
	UsableNow    int `json:"usable_now" jsonschema:"instances a search could go to now"`
	Own          int `json:"own" jsonschema:"the operator's own instances"`
	CircuitOpen  int `json:"circuit_open" jsonschema:"instances cooling down after a refusal or failures"`
	WithConfig   int `json:"with_config" jsonschema:"instances whose /config searxgate has read"`
	Autocomplete int `json:"autocomplete" jsonschema:"instances that offer suggestions"`
}

// ReadOutput is web_url_read's structured answer.
type ReadOutput = reader.Result

var searchSchema = map[string]any{
	"type":     "object",
	"required": []string{"query"},
	"properties": map[string]any{
		"query": map[string]any{"type": "string", "minLength": 1,
			"description": "The search query. This is the main input for the web search"},
		"pageno": map[string]any{"type": "integer", "minimum": 1, "default": 1,
			"description": "Search page number (starts at 1)"},
		"time_range": map[string]any{"type": "string", "enum": []string{"day", "week", "month", "year"},
			"description": "Time range of search (day, week, month, year)"},
		"language": map[string]any{"type": "string",
			"description": "Language code for search results (e.g. 'en', 'fr', 'de', 'en-US'), or 'all'. Default is instance-dependent."},
		"safesearch": map[string]any{"type": []string{"integer", "string"}, "enum": []any{0, 1, 2, "0", "1", "2"},
			"description": "Safe search filter level (0: None, 1: Moderate, 2: Strict), as a number or a string"},
		"num_results": map[string]any{"type": "integer", "minimum": 1, "maximum": 100,
			"description": "Return at most this many results (default: all of the page, usually 10 to 30)"},
		"min_score": map[string]any{"type": "number", "minimum": 0,
			"description": "Drop results whose SearXNG relevance score is below this (scores are not bounded to 1; 0 keeps all)"},
		"response_format": map[string]any{"type": "string", "enum": []string{"text", "json"},
			"description": "text (default): numbered results to read; json: the structured answer as JSON text"},
		"result_detail": map[string]any{"type": "string", "enum": []string{"compact", "full"},
			"description": "full (default): results with engines, score, dates and the answers, infobox and suggestions; compact: title, URL and snippet only"},
		"categories": map[string]any{"type": "string",
			"description": "Comma-separated SearXNG categories, e.g. 'general', 'news', 'science', 'it'"},
		"engines": map[string]any{"type": "string",
			"description": "Comma-separated SearXNG engines, e.g. 'wikipedia,duckduckgo'"},
		"fanout": map[string]any{"type": "integer", "minimum": 1, "maximum": 10,
			"description": "Ask this many SearXNG instances at once and merge their results, for breadth (default 1; the gateway caps it, usually at 3)"},
	},
}

var readSchema = map[string]any{
	"type":     "object",
	"required": []string{"url"},
	"properties": map[string]any{
		"url": map[string]any{"type": "string", "description": "URL of the page (http or https)"},
		"startChar": map[string]any{"type": "integer", "minimum": 0,
			"description": "Starting character position for content extraction (default: 0)"},
		"maxLength": map[string]any{"type": "integer", "minimum": 1,
			"description": "Maximum number of characters to return (default: 20000)"},
		"section": map[string]any{"type": "string",
			"description": "Extract content under a specific heading (searches for heading text)"},
		"paragraphRange": map[string]any{"type": "string", "pattern": `^\s*[0-9]+\s*(-\s*[0-9]*\s*)?$`,
			"description": "Return only these paragraphs (blocks between blank lines), counted from 1: '3', '3-7' or '10-'"},
		"readHeadings": map[string]any{"type": "boolean",
			"description": "Return only a list of headings instead of full content"},
	},
}

var suggestSchema = map[string]any{
	"type":     "object",
	"required": []string{"query"},
	"properties": map[string]any{
		"query": map[string]any{"type": "string", "description": "Partial or complete query to complete"},
		"language": map[string]any{"type": "string",
			"description": "Language code for the suggestions (e.g. 'en', 'fr', 'de'), or 'all' (default)"},
	},
}

var infoSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"includeEngines": map[string]any{"type": "boolean", "default": false,
			"description": "Include the engine names the instances have enabled"},
		"includeDisabled": map[string]any{"type": "boolean", "default": false,
			"description": "Accepted for mcp-searxng's prompts; searxgate learns only enabled engines"},
		"category": map[string]any{"type": "string",
			"description": "Only this category, and the engines in it"},
		"refresh": map[string]any{"type": "boolean", "default": false,
			"description": "Accepted for mcp-searxng's prompts; searxgate reads each instance's /config once a day and never more often"},
	},
}

func yes() *bool { b := true; return &b }

var searchTool = sdk.Tool{
	Name:  ToolSearch,
	Title: "Web search",
	Description: "Searches the web through searxgate, which answers from a pool of SearXNG instances. " +
		"Use it for general queries, news, articles and online content. Returns numbered results (title, URL, snippet) " +
		"and any answers, infobox, corrections and suggestions. Narrow with time_range, language, categories or engines; " +
		"page with pageno; read a result with web_url_read.",
	InputSchema: searchSchema,
	Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: yes(), Title: "Web search"},
}

var suggestTool = sdk.Tool{
	Name:  ToolSuggestions,
	Title: "Search suggestions",
	Description: "Completes a partial or vague query with the suggestions SearXNG's autocompleter gives. " +
		"Use it to refine a query before searching.",
	InputSchema: suggestSchema,
	Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: yes(), Title: "Search suggestions"},
}

var infoTool = sdk.Tool{
	Name:  ToolInfo,
	Title: "What the instances offer",
	Description: "Lists the categories (and with includeEngines the engines) that searxgate's SearXNG instances offer, " +
		"from their /config: common to all of them, or available on some; and the pool in brief. " +
		"Use it to choose categories or engines for searxng_web_search.",
	InputSchema: infoSchema,
	Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: yes(), Title: "What the instances offer"},
}

var readTool = sdk.Tool{
	Name:  ToolRead,
	Title: "Read a web page",
	Description: "Reads a web page and returns its main content as Markdown, under a header with its title, author, " +
		"date, site and canonical URL, without navigation, ads or banners. HTML becomes Markdown, JSON is pretty-printed, " +
		"plain text and Markdown pass as they are, a PDF's text comes page by page (its first 50 pages). " +
		"Use it to read the pages a search found. Long pages come in parts: " +
		"call again with startChar to continue, readHeadings for the outline, section to jump to a heading, or " +
		"paragraphRange for some paragraphs.",
	InputSchema: readSchema,
	Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: yes(), Title: "Read a web page"},
}

// handlers are the tools' implementations: the gateway's own, or the stdio
// bridge's that forward to a gateway. A nil handler's tool is not offered.
type handlers struct {
	search  sdk.ToolHandlerFor[SearchArgs, SearchOutput]
	suggest sdk.ToolHandlerFor[SuggestArgs, SuggestOutput]
	info    sdk.ToolHandlerFor[InfoArgs, InfoOutput]
	read    sdk.ToolHandlerFor[ReadArgs, ReadOutput]
}

// addTools registers the tools on srv with the same definitions whoever
// implements them.
func addTools(srv *sdk.Server, h handlers) {
	srv.AddReceivingMiddleware(plainArgErrors)
	st := searchTool
	sdk.AddTool(srv, &st, h.search)
	if h.suggest != nil {
		t := suggestTool
		sdk.AddTool(srv, &t, h.suggest)
	}
	if h.info != nil {
		t := infoTool
		sdk.AddTool(srv, &t, h.info)
	}
	if h.read != nil {
		rt := readTool
		sdk.AddTool(srv, &rt, h.read)
	}
}

// toolError is the error a tool returns: its text is what the agent reads.
type toolError struct {
	msg     string
	outcome string
}

func (e *toolError) Error() string { return e.msg }
