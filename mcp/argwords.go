package mcp

import (
	"context"
	"fmt"
	"regexp"
	"strings"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// The SDK checks a tool's arguments against its input schema and says
// what failed in the schema's terms ("validating /properties/num_results:
// maximum: 1000/1 is greater than 100.000000"). plainArgErrors says it in
// plain words instead, from the same schema: the argument, what it must
// be, and what it was.

// schemas are the tools' input schemas, by tool name.
var schemas = map[string]map[string]any{
	ToolSearch: searchSchema, ToolSuggestions: suggestSchema, ToolInfo: infoSchema, ToolRead: readSchema,
}

var (
	badProperty = regexp.MustCompile(`validating /properties/([A-Za-z_]+): ([A-Za-z]+): (.*)$`)
	missing     = regexp.MustCompile(`required: missing properties: \["([A-Za-z_]+)"`)
	gotNumber   = regexp.MustCompile(`^(-?[0-9.]+)(?:/([0-9]+))? `)
)

// plainArgErrors is a receiving middleware that rewords the SDK's
// argument errors of tools/call.
func plainArgErrors(next sdk.MethodHandler) sdk.MethodHandler {
	return func(ctx context.Context, method string, req sdk.Request) (sdk.Result, error) {
		res, err := next(ctx, method, req)
		call, ok := req.(*sdk.CallToolRequest)
		tr, ok2 := res.(*sdk.CallToolResult)
		if err != nil || !ok || !ok2 || !tr.IsError || len(tr.Content) != 1 {
			return res, err
		}
		tc, ok := tr.Content[0].(*sdk.TextContent)
		if !ok || !strings.HasPrefix(tc.Text, `validating "arguments"`) {
			return res, err
		}
		if plain := argWords(call.Params.Name, tc.Text); plain != "" {
			tr.Content = []sdk.Content{&sdk.TextContent{Text: plain}}
		}
		return res, err
	}
}

// argWords says the SDK's argument error msg of tool in plain words; ""
// when it cannot read it.
func argWords(tool, msg string) string {
	if m := missing.FindStringSubmatch(msg); m != nil {
		return fmt.Sprintf("the argument %q is required: %s", m[1], describe(property(tool, m[1])))
	}
	m := badProperty.FindStringSubmatch(msg)
	if m == nil {
		return ""
	}
	name, keyword, rest := m[1], m[2], m[3]
	out := fmt.Sprintf("the argument %q must be %s", name, describe(property(tool, name)))
	if keyword == "maximum" || keyword == "minimum" {
		if g := gotNumber.FindStringSubmatch(rest); g != nil && (g[2] == "" || g[2] == "1") {
			out += "; it was " + g[1]
		}
	}
	return out
}

// property is the schema of tool's argument name; nil when unknown.
func property(tool, name string) map[string]any {
	props, _ := schemas[tool]["properties"].(map[string]any)
	p, _ := props[name].(map[string]any)
	return p
}

// describe says what a property's schema allows, in words.
func describe(p map[string]any) string {
	if p == nil {
		return "as the tool's description says"
	}
	if enum, ok := p["enum"].([]string); ok {
		return "one of " + strings.Join(enum, ", ")
	}
	if _, ok := p["enum"].([]any); ok {
		return "one of " + strings.Trim(fmt.Sprint(p["enum"]), "[]")
	}
	what := map[string]string{"integer": "a whole number", "number": "a number", "string": "text", "boolean": "true or false"}[fmt.Sprint(p["type"])]
	if what == "" {
		what = "a value"
	}
	min, hasMin := p["minimum"]
	max, hasMax := p["maximum"]
	switch {
	case hasMin && hasMax:
		return fmt.Sprintf("%s from %v to %v", what, min, max)
	case hasMin:
		return fmt.Sprintf("%s of at least %v", what, min)
	case hasMax:
		return fmt.Sprintf("%s of at most %v", what, max)
	}
	if n, ok := p["minLength"]; ok && fmt.Sprint(n) == "1" {
		return "non-empty " + what
	}
	if d, ok := p["description"].(string); ok && p["pattern"] != nil {
		return what + ": " + d
	}
	return what
}
