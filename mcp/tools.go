package mcp

import (
	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/reader"
)

// Tool names, as mcp-searxng names them, so that prompts written for it
// carry over.
const (
	ToolSearch = "searxng_web_search"
	ToolRead   = "web_url_read"
)

// SearchArgs are searxng_web_search's arguments.
type SearchArgs struct {
	Query      string `json:"query"`
	PageNo     int    `json:"pageno,omitempty"`
	TimeRange  string `json:"time_range,omitempty"`
	Language   string `json:"language,omitempty"`
	SafeSearch *int   `json:"safesearch,omitempty"`
	Categories string `json:"categories,omitempty"`
	Engines    string `json:"engines,omitempty"`
	Fanout     int    `json:"fanout,omitempty"`
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
}

// SearchResult is one result.
type SearchResult struct {
	Title         string `json:"title"`
	URL           string `json:"url"`
	Content       string `json:"content,omitempty"`
	Engine        string `json:"engine,omitempty"`
	PublishedDate string `json:"published_date,omitempty"`
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
	URL          string `json:"url"`
	MaxLength    int    `json:"maxLength,omitempty"`
	StartChar    int    `json:"startChar,omitempty"`
	Section      string `json:"section,omitempty"`
	ReadHeadings bool   `json:"readHeadings,omitempty"`
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
		"safesearch": map[string]any{"type": "integer", "enum": []int{0, 1, 2},
			"description": "Safe search filter level (0: None, 1: Moderate, 2: Strict)"},
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
		"readHeadings": map[string]any{"type": "boolean",
			"description": "Return only a list of headings instead of full content"},
	},
}

func yes() *bool { b := true; return &b }

var searchTool = sdk.Tool{
	Name:  ToolSearch,
	Title: "Web search",
	Description: "Performs a web search through searxgate, which answers from a pool of public SearXNG instances. " +
		"Use it for general queries, news, articles and online content: broad information gathering, recent events, " +
		"or when you need diverse web sources. Returns numbered results (title, URL, snippet) and any answers, " +
		"infobox, corrections and suggestions.",
	InputSchema: searchSchema,
	Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: yes(), Title: "Web search"},
}

var readTool = sdk.Tool{
	Name:  ToolRead,
	Title: "Read a web page",
	Description: "Reads the content of a web page (HTML, Markdown or plain text) and returns its main content as " +
		"Markdown, without navigation, scripts or banners. Use it to read the pages a search found. Long pages come " +
		"in parts: call again with startChar to continue, readHeadings to see the outline, or section to jump to a heading.",
	InputSchema: readSchema,
	Annotations: &sdk.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: yes(), Title: "Read a web page"},
}

// handlers are the tools' implementations: the gateway's own, or the stdio
// bridge's that forward to a gateway.
type handlers struct {
	search sdk.ToolHandlerFor[SearchArgs, SearchOutput]
	read   sdk.ToolHandlerFor[ReadArgs, ReadOutput] // nil: not offered
}

// addTools registers the tools on srv with the same definitions whoever
// implements them.
func addTools(srv *sdk.Server, h handlers) {
	st := searchTool
	sdk.AddTool(srv, &st, h.search)
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
