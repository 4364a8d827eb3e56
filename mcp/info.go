package mcp

import (
	"context"
	"errors"
	"fmt"
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
	got, err := s.cfg.Suggest.Autocomplete(ctx, q, lang)
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
		if x.UsableNow {
			out.Pool.UsableNow++
		}
		if x.Tier.String() == "own" {
			out.Pool.Own++
		}
		if x.WhyNot == "circuit_open" {
			out.Pool.CircuitOpen++
		}
		if x.Caps.Autocomplete != "" {
			out.Pool.Autocomplete++
		}
		if !x.Caps.ConfigOK || len(x.Caps.Engines) == 0 {
			continue
		}
		out.Pool.WithConfig++
		if x.Disabled {
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
