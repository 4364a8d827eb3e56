package mcp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/proxy"
)

// suggest runs searxng_search_suggestions: the instances' autocompleters,
// through the proxy (their own small budget, cached), counted against the
// client's limit as /autocompleter is.
func (s *Server) suggest(ctx context.Context, req *sdk.CallToolRequest, in SuggestArgs) (*sdk.CallToolResult, SuggestOutput, error) {
	q := strings.TrimSpace(in.Query)
	if q == "" {
		return nil, SuggestOutput{}, &toolError{outcome: OutcomeInvalid, msg: "invalid arguments: query is empty"}
	}
	if s.cfg.Admit != nil {
		if ok, wait := s.cfg.Admit(clientOf(req), s.cfg.Now()); !ok {
			return nil, SuggestOutput{}, &toolError{outcome: OutcomeLimited,
				msg: fmt.Sprintf("too many calls from this client; retry in %d s", secs(wait))}
		}
	}
	lang := in.Language
	if lang == "all" {
		lang = ""
	}
	got, err := s.cfg.Suggest.Autocomplete(proxy.WithClient(ctx, clientOf(req)), q, lang)
	if err != nil {
		if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
			return nil, SuggestOutput{}, &toolError{outcome: OutcomeFailed, msg: "the call was cancelled"}
		}
		if errors.Is(err, proxy.ErrNoAutocomplete) {
			return nil, SuggestOutput{}, &toolError{outcome: OutcomeLimited,
				msg: "no instance can give suggestions now (none offers them, or those that do had their share); search with searxng_web_search instead, or retry in a minute"}
		}
		return nil, SuggestOutput{}, &toolError{outcome: OutcomeFailed,
			msg: "no instance gave suggestions; search with searxng_web_search instead"}
	}
	out := SuggestOutput{Query: q, Suggestions: got}
	if out.Suggestions == nil {
		out.Suggestions = []string{}
	}
	var b strings.Builder
	if len(got) == 0 {
		fmt.Fprintf(&b, "No suggestions for %q.", q)
	} else {
		fmt.Fprintf(&b, "Suggestions for %q:\n", q)
		for _, x := range got {
			fmt.Fprintf(&b, "- %s\n", x)
		}
	}
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: strings.TrimRight(b.String(), "\n")}}}, out, nil
}

// info runs searxng_instance_info from what the search path knows: each
// instance's /config (read at most once a day, never for this call) and
// its state now.
func (s *Server) info(_ context.Context, _ *sdk.CallToolRequest, in InfoArgs) (*sdk.CallToolResult, InfoOutput, error) {
	out := instanceInfo(s.cfg.Pool.Instances(s.cfg.Now()), in)
	return &sdk.CallToolResult{Content: []sdk.Content{&sdk.TextContent{Text: indented(out)}}}, out, nil
}

// instanceInfo sums up the instances: categories and engines common to
// every instance whose /config was read, and available on at least one;
// the pool's counts.
func instanceInfo(insts []proxy.Instance, in InfoArgs) InfoOutput {
	cat := strings.ToLower(strings.TrimSpace(in.Category))
	var out InfoOutput
	var cats, engines []map[string]bool
	for _, x := range insts {
		out.Pool.Instances++
		if x.UsableNow() {
			out.Pool.UsableNow++
		}
		if x.Own() {
			out.Pool.Own++
		}
		if x.WhyNot == proxy.WhyCircuitOpen {
			out.Pool.CircuitOpen++
		}
		if x.Caps.Autocomplete != "" {
			out.Pool.Autocomplete++
		}
		if !x.Caps.ConfigOK || len(x.Caps.Engines) == 0 {
			continue
		}
		out.Pool.WithConfig++
		if x.WhyNot == proxy.WhyDisabled {
			continue // searxgate sends it nothing: what it offers is not on offer
		}
		c, e := map[string]bool{}, map[string]bool{}
		for _, en := range x.Caps.Engines {
			inCat := cat == ""
			for _, ec := range en.Categories {
				ec = strings.ToLower(ec)
				if cat == "" || ec == cat {
					c[ec] = true
				}
				inCat = inCat || ec == cat
			}
			if inCat {
				e[en.Name] = true
			}
		}
		cats, engines = append(cats, c), append(engines, e)
	}
	out.Categories = Offered{Common: common(cats), Available: available(cats)}
	if in.IncludeEngines {
		out.Engines = &EngineSets{Common: EngineNames{Enabled: common(engines)}, Available: EngineNames{Enabled: available(engines)}}
	}
	if out.Pool.WithConfig == 0 {
		out.Notes = append(out.Notes, "searxgate has not read any instance's /config yet (it does at start and once a day); "+
			"searches still work with SearXNG's default categories")
	}
	if in.IncludeDisabled {
		out.Notes = append(out.Notes, "disabled engines are not listed: an instance's /config names only those it runs")
	}
	if in.Refresh {
		out.Notes = append(out.Notes, "refresh is not needed: searxgate reads each instance's /config once a day, "+
			"and never more often, to spare the instances")
	}
	return out
}

// common is what every set has, sorted; available what any has.
func common(sets []map[string]bool) []string {
	out := []string{}
	if len(sets) == 0 {
		return out
	}
	for k := range sets[0] {
		all := true
		for _, s := range sets[1:] {
			if !s[k] {
				all = false
				break
			}
		}
		if all {
			out = append(out, k)
		}
	}
	slices.Sort(out)
	return out
}

func available(sets []map[string]bool) []string {
	seen := map[string]bool{}
	out := []string{}
	for _, s := range sets {
		for k := range s {
			if !seen[k] {
				seen[k] = true
				out = append(out, k)
			}
		}
	}
	slices.Sort(out)
	return out
}

// StatusURI is the resource that shows searxgate's pool in brief.
const StatusURI = "searxgate://status"

// maxStatusInstances bounds the instances the status resource lists.
const maxStatusInstances = 25

// StatusBrief is the status resource: the pool in a few numbers and its
// best instances, as /status shows them.
type StatusBrief struct {
	Pool      PoolBrief       `json:"pool"`
	Instances []InstanceBrief `json:"instances"`
	// More is how many instances are not listed.
	More int    `json:"more,omitempty"`
	Note string `json:"note"`
}

// InstanceBrief is one instance of the status resource.
type InstanceBrief struct {
	URL       string    `json:"url"`
	Own       bool      `json:"own,omitempty"`
	UsableNow bool      `json:"usable_now"`
	WhyNot    proxy.Why `json:"why_not,omitempty"` // its label (proxy.Why's String)
	Health    int       `json:"health"`
	LatencyMS float64   `json:"latency_ms"`
	// Thin: its answers are expected thin; Suspended the engines it
	// reports suspended now.
	Thin      bool     `json:"thin,omitempty"`
	Suspended []string `json:"suspended,omitempty"`
}

var statusResource = sdk.Resource{
	URI:         StatusURI,
	Name:        "status",
	Title:       "searxgate's instances in brief",
	Description: "The pool in a few numbers and its best instances (health 0-100, latency, why one cannot be searched now), as /status shows them.",
	MIMEType:    "application/json",
}

// status reads the status resource.
func (s *Server) status(_ context.Context, _ *sdk.ReadResourceRequest) (*sdk.ReadResourceResult, error) {
	b := statusBrief(s.cfg.Pool.Instances(s.cfg.Now()))
	return &sdk.ReadResourceResult{Contents: []*sdk.ResourceContents{{URI: StatusURI, MIMEType: "application/json", Text: indented(b)}}}, nil
}

func statusBrief(insts []proxy.Instance) StatusBrief {
	b := StatusBrief{Pool: instanceInfo(insts, InfoArgs{}).Pool, Instances: []InstanceBrief{},
		Note: "read again to see changes: searxgate's MCP endpoint is stateless and sends no notifications"}
	for i, x := range insts {
		if i == maxStatusInstances {
			b.More = len(insts) - i
			break
		}
		ib := InstanceBrief{URL: x.URL, Own: x.Own(), UsableNow: x.UsableNow(),
			WhyNot: x.WhyNot, Health: x.Health, LatencyMS: math.Round(x.LatencyMS), Thin: x.Thin}
		for _, e := range x.Quality.Suspended {
			ib.Suspended = append(ib.Suspended, e.Engine+": "+e.Reason)
		}
		b.Instances = append(b.Instances, ib)
	}
	return b
}
