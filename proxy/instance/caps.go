package instance

import (
	"errors"
	"strconv"
	"time"

	"github.com/searxgate/searxgate/detect"
	"github.com/searxgate/searxgate/proxy/upstream"
)

// How often searxgate reads an instance's /config (its terms), and how long
// a learned "JSON is disabled" holds before JSON is tried again.
const (
	configEvery     = 24 * time.Hour
	configRetry     = time.Hour // after a /config that failed
	jsonRecheck     = 7 * 24 * time.Hour
	configFetchers  = 4 // /config reads at once, at most
	configReadLimit = 5 * time.Second
)

// ReadWait is how long a search waits, with left before its deadline, for
// the first read of an instance's terms (Record.Terms).
func ReadWait(left time.Duration) time.Duration { return min(configReadLimit, left/4) }

// Tri is a learned yes/no that may not be known yet.
type Tri int8

const (
	Unknown Tri = 0
	Yes     Tri = 1
	No      Tri = -1
)

// ErrTermsUnread is Caps.ConfigError of an instance whose /config was
// never read, nor a read of it failed.
var ErrTermsUnread = errors.New("proxy: the instance's /config was not read yet")

// ConfigReadError is why the last /config read of an instance failed:
// the HTTP status it answered, or the transport's reason.
type ConfigReadError struct {
	// Reason is the transport's (detect.DNS, detect.ConnRefused,
	// detect.Timeout, detect.TLS, detect.Reset, detect.Transport, ...);
	// empty when Status is set.
	Reason detect.Reason
	Status int // the HTTP status of a read that got one; 0 otherwise
}

func (e *ConfigReadError) Error() string {
	if e.Status != 0 {
		return "status " + strconv.Itoa(e.Status)
	}
	return string(e.Reason)
}

// ConfigError is why c's last /config read failed, as a
// *ConfigReadError; ErrTermsUnread when it was never read; nil after a
// good read.
func (c Caps) ConfigError() error {
	switch {
	case c.ConfigOK:
		return nil
	case c.ConfigAt.IsZero() && c.ConfigErr == "":
		return ErrTermsUnread
	case c.ConfigStatus != 0:
		return &ConfigReadError{Status: c.ConfigStatus}
	}
	return &ConfigReadError{Reason: detect.Reason(c.ConfigErr)}
}

// Caps is what searxgate learned about one instance's terms: from its
// /config (at most once a day) and from its answers.
type Caps struct {
	ConfigAt time.Time `json:"config_at,omitzero"` // last /config read, good or not
	ConfigOK bool      `json:"config_ok"`
	// ConfigErr is why the last /config read failed (a transport reason
	// such as dns, refused, timeout, tls, reset, or "status 404"); empty
	// after a good one.
	ConfigErr string `json:"config_err,omitempty"`
	// ConfigStatus is the HTTP status of a failed read that got one (0
	// for a transport failure and after a good read).
	ConfigStatus int       `json:"config_status,omitempty"`
	Version      string    `json:"version,omitempty"`
	Limiter      bool      `json:"limiter"`
	LinkToken    bool      `json:"link_token"`
	Public       bool      `json:"public_instance"`
	Autocomplete string    `json:"autocomplete,omitempty"`
	JSON         Tri       `json:"json"` // does format=json answer?
	JSONAt       time.Time `json:"json_at,omitzero"`
	// Engines are the engines the instance has enabled, from its /config.
	Engines []Engine `json:"engines,omitempty"`
	// EnginesV is the EnginesVersion the engines were read with.
	EnginesV int `json:"engines_v,omitempty"`
}

// Engine is one search engine an instance runs, with what its /config
// says the engine can do.
type Engine struct {
	Name             string   `json:"name"`
	Categories       []string `json:"categories,omitempty"`
	Shortcut         string   `json:"shortcut,omitempty"`
	Paging           bool     `json:"paging,omitempty"`
	LanguageSupport  bool     `json:"language_support,omitempty"`
	Languages        []string `json:"languages,omitempty"`
	Regions          []string `json:"regions,omitempty"`
	SafeSearch       bool     `json:"safesearch,omitempty"`
	TimeRangeSupport bool     `json:"time_range_support,omitempty"`
	Timeout          float64  `json:"timeout,omitempty"` // seconds; 0 = not said
}

// EnginesVersion is what Caps.EnginesV says when the engines were read
// with every field Engine has; terms stored by an older searxgate (engines
// without their capabilities) are read again at once.
const EnginesVersion = 1

// stale reports whether the engines were read by an older searxgate.
func (c Caps) stale() bool { return len(c.Engines) > 0 && c.EnginesV < EnginesVersion }

// EnginesOf is the engines an instance's /config lists as enabled.
func EnginesOf(t detect.Terms) []Engine {
	var engines []Engine
	for _, e := range t.Engines {
		if e.Enabled {
			engines = append(engines, Engine{
				Name: e.Name, Categories: e.Categories, Shortcut: e.Shortcut,
				Paging: e.Paging, LanguageSupport: e.LanguageSupport, Languages: e.Languages, Regions: e.Regions,
				SafeSearch: e.SafeSearch, TimeRangeSupport: e.TimeRangeSupport, Timeout: e.Timeout,
			})
		}
	}
	return engines
}

// format is the upstream format searxgate uses for this instance: JSON
// where /config says the limiter is off (its JSON window is 4 an hour)
// and the instance is known to offer JSON (its results page lists it, or
// it answered JSON before); the HTML page otherwise. /config does not say
// which formats are on: the first search learns it from the results
// page's list of formats, which spares every instance that disabled JSON
// a 403 (HTML results carry positions and scores from their rank, so that
// first answer loses nothing). A "no" is asked again after jsonRecheck,
// through the HTML page's list of formats.
func (c Caps) format() string {
	if !c.ConfigOK || c.Limiter || c.JSON != Yes {
		return upstream.FormatHTML
	}
	return upstream.FormatJSON
}

// LearnFormats reports whether the formats an instance offers should be
// read (again) from its HTML page.
func (c Caps) LearnFormats(now time.Time) bool {
	return c.JSON == Unknown || (c.JSON == No && now.Sub(c.JSONAt) >= jsonRecheck)
}

// needsConfig reports whether /config is due.
func (c Caps) needsConfig(now time.Time) bool {
	if c.ConfigAt.IsZero() {
		return true
	}
	if c.ConfigOK {
		return now.Sub(c.ConfigAt) >= configEvery || c.stale()
	}
	return now.Sub(c.ConfigAt) >= configRetry
}
