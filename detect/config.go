package detect

import (
	"fmt"
	"strings"
	"sync"
	"unique"

	"github.com/searxgate/searxgate/results"
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

// ConfigEngine is one engine as /config lists it (SearXNG's webapp.py
// config(): the engine's settings and its traits' language and region
// codes).
type ConfigEngine struct {
	Name             string
	Categories       []string
	Enabled          bool
	Shortcut         string
	Paging           bool
	LanguageSupport  bool
	Languages        []string // the engine's languages (its traits'), SearXNG's codes
	Regions          []string
	SafeSearch       bool
	TimeRangeSupport bool
	Timeout          float64 // seconds; 0 when /config does not say
}

// Bounds on what one /config keeps (its body is at most the upstream
// client's cap, 4 MiB): SearXNG lists a few hundred engines, an engine at
// most a few hundred language and region codes of a few bytes each.
const (
	MaxConfigEngines = 1024
	MaxConfigCodes   = 1024 // languages, and regions, of one engine
	// MaxConfigCodesTotal caps the language and region codes of all the
	// engines of one /config (SearXNG's own engines have about 5,400 in
	// all); the engines past it are read without them.
	MaxConfigCodesTotal = 16384
	maxConfigName       = 256  // an engine's name, shortcut or category
	maxConfigCode       = 32   // a language or region code; a longer one is dropped
	maxConfigTimeout    = 3600 // seconds; a larger or negative timeout is read as 0
)

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
	codes := MaxConfigCodesTotal // codes still to be read
	doc.ForEach(func(k, v gjson.Result) bool {
		switch k.Str {
		case "version":
			seen = true
			t.Version = intern(text(v))
		case "instance_name":
			t.InstanceName = text(v)
		case "autocomplete":
			t.Autocomplete = intern(text(v))
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
				if len(t.Engines) >= MaxConfigEngines {
					return false
				}
				if ce := readConfigEngine(e, &codes); ce.Name != "" {
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

// readConfigEngine reads one engine of /config, with at most *codes of
// language and region codes in all (less what it read). Its texts are
// interned: they are kept as long as the instance's terms, and the same
// names and codes come from every instance (and keep no /config body
// alive); so are its lists of codes, the same on every instance of a
// version.
func readConfigEngine(e gjson.Result, codes *int) ConfigEngine {
	ce := ConfigEngine{
		Name:             configName(e.Get("name").Str),
		Categories:       configNames(e.Get("categories"), results.MaxListItems, maxConfigName),
		Enabled:          e.Get("enabled").Type == gjson.True,
		Shortcut:         configName(e.Get("shortcut").Str),
		Paging:           e.Get("paging").Type == gjson.True,
		LanguageSupport:  e.Get("language_support").Type == gjson.True,
		SafeSearch:       e.Get("safesearch").Type == gjson.True,
		TimeRangeSupport: e.Get("time_range_support").Type == gjson.True,
	}
	ce.Languages = InternList(configNames(e.Get("languages"), min(MaxConfigCodes, *codes), maxConfigCode))
	*codes -= len(ce.Languages)
	ce.Regions = InternList(configNames(e.Get("regions"), min(MaxConfigCodes, *codes), maxConfigCode))
	*codes -= len(ce.Regions)
	if v := e.Get("timeout"); v.Type == gjson.Number && v.Num > 0 && v.Num <= maxConfigTimeout {
		ce.Timeout = v.Num
	}
	return ce
}

// lists are the lists of codes InternList keeps, by their codes joined
// with NUL, up to maxInternedBytes of them.
var lists struct {
	sync.Mutex
	m     map[string][]string
	bytes int
}

const maxInternedBytes = 4 << 20

// InternList returns a list equal to list, the one kept for it when
// there is one (list's strings interned and list kept otherwise, while
// the kept lists are under maxInternedBytes). The list returned is shared:
// it must never be changed.
func InternList(list []string) []string {
	if len(list) == 0 {
		return list
	}
	key := strings.Join(list, "\x00")
	lists.Lock()
	defer lists.Unlock()
	if l, ok := lists.m[key]; ok {
		return l
	}
	for i, x := range list {
		list[i] = unique.Make(x).Value()
	}
	if lists.bytes+len(key) <= maxInternedBytes {
		if lists.m == nil {
			lists.m = map[string][]string{}
		}
		lists.m[key] = list
		lists.bytes += len(key)
	}
	return list
}

// configName is s interned, or "" when it is longer than a name may be.
func configName(s string) string {
	if s == "" || len(s) > maxConfigName {
		return ""
	}
	return unique.Make(s).Value()
}

// configNames reads a list of strings, interned: at most n, each at most
// size bytes (a longer one is skipped, as is anything not a string). An
// empty list is an empty slice, not nil (SearXNG writes []).
func configNames(v gjson.Result, n, size int) []string {
	if !v.IsArray() {
		return nil
	}
	out := []string{}
	v.ForEach(func(_, e gjson.Result) bool {
		if len(out) >= n {
			return false
		}
		if e.Type == gjson.String && e.Str != "" && len(e.Str) <= size {
			out = append(out, unique.Make(e.Str).Value())
		}
		return true
	})
	return out
}

// intern is s interned: a copy that keeps no /config body alive, shared
// with every instance that says the same.
func intern(s string) string {
	if s == "" {
		return ""
	}
	return unique.Make(s).Value()
}
