package directory

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"strings"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// Where a List came from (List.From).
const (
	FromFetched     = "fetched"      // a fresh copy from the URL
	FromNotModified = "not_modified" // the URL answered 304: the saved copy is current
	FromFile        = "file"         // the local file
	FromStore       = "store"        // the last good copy in the Cache
	FromEmbedded    = "embedded"     // the snapshot compiled into the binary
	FromNone        = "none"         // Location None: no public instance at all
)

// None is the Location that asks for no public instance at all: Load
// returns an empty list without reading anything, and Run does not refresh.
const None = "none"

// ErrListFile: the instance list file cannot be read or does not parse.
// Load returns it (wrapped, with the path) instead of falling back: the
// operator named that file, and a list they did not choose must not be
// searched in its place.
var ErrListFile = errors.New("directory: unusable instance list file")

// DefaultLocation is searx.space's instance list.
const DefaultLocation = "https://searx.space/data/instances.json"

// DefaultRefresh is how often Run refreshes when told a non-positive
// interval.
const DefaultRefresh = 6 * time.Hour

// List is the outcome of a Load.
type List struct {
	Entries []Entry
	From    string // FromFetched, FromNotModified, FromFile, FromStore, FromEmbedded or FromNone
	// FetchedAt is when the list was fetched or read (the saved time for
	// FromStore; the day the snapshot was built for FromEmbedded).
	FetchedAt time.Time
}

// Fresh reports whether the list comes from the configured location now
// (fetched, confirmed by a 304, read from the file, or None), rather than
// from a fallback.
func (l List) Fresh() bool {
	return l.From == FromFetched || l.From == FromNotModified || l.From == FromFile || l.From == FromNone
}

// Source loads the instance list. Its fields are set before the first
// call and not changed after; Source keeps no state of its own, so Load and
// Run may run concurrently when the Cache and Fetcher allow it.
type Source struct {
	// Location is an http:// or https:// URL, a local file path
	// ("file://" prefix allowed), or None. Empty means no location: the
	// saved copy or the embedded snapshot.
	Location string
	Fetcher  Fetcher // used for URLs
	Cache    Cache   // may be nil
	Filter   Filter
	Logger   *slog.Logger // nil discards
	// Clock tells the time of a fetch and times Run's waits; nil is the
	// real clock.
	Clock clock.Clock
}

func (s *Source) now() time.Time { return clock.Or(s.Clock).Now() }

func (s *Source) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.New(slog.DiscardHandler)
}

// Load returns the instance list.
//
//   - None: an empty list (FromNone); nothing is read.
//   - A file: the file, or an error wrapping ErrListFile that names it when
//     it cannot be read or does not parse; never a fallback. An empty file
//     (or one whose instances the Filter all drops) is an empty list.
//   - A URL: a fresh fetch, else the last good copy from the Cache, else the
//     embedded snapshot (logged at WARN with the day it was built). A
//     fetched copy that does not parse or keeps no instance never replaces
//     a good one: Load logs why and falls back. A good fetch is saved to
//     the Cache.
//
// A scheme other than http, https or file is an error (ErrScheme). The
// error is also non-nil when not even the embedded snapshot keeps an
// instance under the Filter (ErrNoInstances).
func (s *Source) Load(ctx context.Context) (List, error) {
	now := s.now()
	log := s.logger()

	loc := strings.TrimSpace(s.Location)
	scheme, _, hasScheme := strings.Cut(loc, "://")
	scheme = strings.ToLower(scheme)
	switch {
	case strings.EqualFold(loc, None):
		log.Info("directory: no public instance list (none)")
		return List{From: FromNone, FetchedAt: now}, nil
	case hasScheme && scheme == "file":
		return s.file(loc[len("file://"):], now)
	case hasScheme && scheme != "http" && scheme != "https":
		return List{}, fmt.Errorf("%w: %q is neither an http(s) URL, a file nor %q", ErrScheme, loc, None)
	case loc != "" && !hasScheme:
		return s.file(loc, now)
	}

	var saved Saved
	haveSaved := false
	if s.Cache != nil {
		var err error
		saved, haveSaved, err = s.Cache.LoadDirectory()
		if err != nil {
			log.Warn("directory: cannot read the saved instance list", "err", err)
			saved, haveSaved = Saved{}, false
		}
	}

	if loc != "" {
		if list, ok := s.fetch(ctx, now, loc, saved, haveSaved); ok {
			return list, nil
		}
	}
	if haveSaved {
		entries, rep, err := parse(saved.Raw, s.Filter)
		if err == nil {
			log.Warn("directory: using the saved instance list", "fetched_at", saved.FetchedAt, "summary", rep.String())
			return List{Entries: entries, From: FromStore, FetchedAt: saved.FetchedAt}, nil
		}
		log.Warn("directory: the saved instance list is not usable", "err", err)
	}
	entries, rep, err := parse(snapshot, s.Filter)
	if err != nil {
		return List{}, fmt.Errorf("directory: embedded snapshot: %w", err)
	}
	built := SnapshotDate()
	log.Warn("directory: no instance list could be fetched and none is saved: using the snapshot compiled into searxgate",
		"snapshot_date", built.Format(time.DateOnly), "summary", rep.String())
	return List{Entries: entries, From: FromEmbedded, FetchedAt: built}, nil
}

// file reads the list from a local file: no fallback, since the operator
// chose that file.
func (s *Source) file(path string, now time.Time) (List, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return List{}, fmt.Errorf("%w: %w", ErrListFile, err) // the PathError names the file
	}
	if len(bytes.TrimSpace(data)) == 0 {
		s.logger().Info("directory: the instance list file is empty", "path", path)
		return List{From: FromFile, FetchedAt: now}, nil
	}
	entries, rep, err := parse(data, s.Filter)
	switch {
	case errors.Is(err, ErrNoInstances):
		s.logger().Info("directory: the instance list file keeps no instance", "path", path, "summary", rep.String())
		return List{From: FromFile, FetchedAt: now}, nil
	case err != nil:
		return List{}, fmt.Errorf("%w: %s: %w", ErrListFile, path, err)
	}
	s.logger().Info("directory: read the instance list file", "path", path, "summary", rep.String())
	return List{Entries: entries, From: FromFile, FetchedAt: now}, nil
}

func (s *Source) fetch(ctx context.Context, now time.Time, loc string, saved Saved, haveSaved bool) (List, bool) {
	log := s.logger()
	if s.Fetcher == nil {
		log.Error("directory: no fetcher for the instance list URL; falling back", "url", loc)
		return List{}, false
	}
	prev := Saved{}
	if haveSaved {
		prev = saved
	}
	res, err := s.Fetcher.Fetch(ctx, loc, prev)
	if err != nil {
		log.Warn("directory: fetching the instance list failed; keeping the last good one", "url", loc, "err", err)
		return List{}, false
	}
	if res.NotModified {
		if !haveSaved {
			log.Warn("directory: the server answered 304 but nothing is saved; falling back", "url", loc)
			return List{}, false
		}
		entries, _, err := parse(saved.Raw, s.Filter)
		if err != nil {
			log.Warn("directory: not modified, but the saved instance list is not usable", "err", err)
			return List{}, false
		}
		s.save(Saved{Raw: saved.Raw, ETag: res.ETag, LastModified: res.LastModified, FetchedAt: now})
		log.Info("directory: instance list not modified", "url", loc, "instances", len(entries))
		return List{Entries: entries, From: FromNotModified, FetchedAt: now}, true
	}
	entries, rep, err := parse(res.Body, s.Filter)
	if err != nil {
		log.Warn("directory: the fetched instance list is not usable; keeping the last good one", "url", loc, "bytes", len(res.Body), "err", err)
		return List{}, false
	}
	s.save(Saved{Raw: res.Body, ETag: res.ETag, LastModified: res.LastModified, FetchedAt: now})
	log.Info("directory: fetched the instance list", "url", loc, "summary", rep.String())
	return List{Entries: entries, From: FromFetched, FetchedAt: now}, true
}

func (s *Source) save(v Saved) {
	if s.Cache == nil {
		return
	}
	if err := s.Cache.SaveDirectory(v); err != nil {
		s.logger().Warn("directory: cannot save the instance list", "err", err)
	}
}

// Run refreshes the list every interval (DefaultRefresh when every ≤ 0),
// each wait passed through jitter (nil keeps it; a non-positive result
// keeps every), until ctx ends. It calls onList with each fresh list
// (List.Fresh); when a refresh falls back to a saved or embedded copy it
// logs and keeps what the caller has (and a file that went missing or bad
// is logged, the current list kept). Run does not load at once: call Load
// first. With Location None there is nothing to refresh: Run returns at
// once.
func (s *Source) Run(ctx context.Context, every time.Duration, jitter func(time.Duration) time.Duration, onList func(List)) {
	if strings.EqualFold(strings.TrimSpace(s.Location), None) {
		return
	}
	if every <= 0 {
		every = DefaultRefresh
	}
	clk := clock.Or(s.Clock)
	log := s.logger()
	for {
		wait := every
		if jitter != nil {
			if d := jitter(every); d > 0 {
				wait = d
			}
		}
		timer, stop := clk.NewTimer(wait)
		select {
		case <-ctx.Done():
			stop()
			return
		case <-timer:
		}
		list, err := s.Load(ctx)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil:
			log.Error("directory: refresh failed", "err", err)
		case !list.Fresh():
			log.Warn("directory: refresh got no fresh list; keeping the current one", "from", list.From)
		default:
			onList(list)
		}
	}
}

// Jitter returns a jitter for Run that spreads a wait uniformly over
// ±spread of it (spread 0.1: 6 h becomes 5 h 24 min to 6 h 36 min), drawing
// from random, a source of numbers in [0, 1) such as a seeded
// (*rand.Rand).Float64.
func Jitter(random func() float64, spread float64) func(time.Duration) time.Duration {
	spread = min(max(spread, 0), 1)
	return func(d time.Duration) time.Duration {
		f := 1 - spread + 2*spread*random()
		return time.Duration(float64(d) * f)
	}
}
