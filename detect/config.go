package detect

import (
	"fmt"

	"github.com/tidwall/gjson"
)

// Terms is what an instance's /config says about how it treats clients.
type Terms struct {
	Version string
	// Limiter: the limiter (rate limits and bot detection) is on.
	Limiter bool
	// LimiterKnown: /config said whether the limiter is on (older
	// SearXNG does not).
	LimiterKnown bool
	// LinkToken: the link-token check is on; a client that never loads
	// the page's CSS token is treated as a bot.
	LinkToken      bool
	PublicInstance bool
	Autocomplete   string
	Categories     []string
	Engines        []ConfigEngine
	InstanceName   string
}

// ConfigEngine is one engine as /config lists it.
type ConfigEngine struct {
	Name       string
	Categories []string
	Enabled    bool
	Shortcut   string
}

// ParseConfig reads an instance's /config JSON. It fails, with an error
// wrapping ErrNotConfig, on anything that is not a JSON object with a
// version or an engine list.
func ParseConfig(body []byte) (Terms, error) {
	var t Terms
	if !gjson.ValidBytes(body) {
		return t, fmt.Errorf("%w: invalid JSON", ErrNotConfig)
	}
	doc := gjson.Parse(string(body))
	if !doc.IsObject() {
		return t, fmt.Errorf("%w: not an object", ErrNotConfig)
	}
	seen := false
	doc.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "version":
			seen = true
			t.Version = text(v)
		case "instance_name":
			t.InstanceName = text(v)
		case "autocomplete":
			t.Autocomplete = text(v)
		case "public_instance":
			t.PublicInstance = v.Type == gjson.True
		case "categories":
			t.Categories = readTexts(v)
		case "limiter":
			v.ForEach(func(lk, lv gjson.Result) bool {
				switch lk.Str {
				case "enabled":
					t.Limiter, t.LimiterKnown = lv.Type == gjson.True, true
				case "botdetection.ip_limit.link_token":
					t.LinkToken = lv.Type == gjson.True
				}
				return true
			})
		case "engines":
			seen = true
			v.ForEach(func(_, e gjson.Result) bool {
				if !e.IsObject() {
					return true
				}
				ce := ConfigEngine{
					Name:       e.Get("name").Str,
					Categories: readTexts(e.Get("categories")),
					Enabled:    e.Get("enabled").Type == gjson.True,
					Shortcut:   e.Get("shortcut").Str,
				}
				if ce.Name != "" {
					t.Engines = append(t.Engines, ce)
				}
				return true
			})
		}
		return true
	})
	if !seen {
		return Terms{}, fmt.Errorf("%w: neither version nor engines", ErrNotConfig)
	}
	return t, nil
}
