package directory

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// memCache is a Cache in memory.
type memCache struct {
	mu      sync.Mutex // guards the fields below
	saved   Saved
	has     bool
	loadErr error
	saveErr error
	saves   int
}

func (c *memCache) LoadDirectory() (Saved, bool, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.loadErr != nil {
		return Saved{}, false, c.loadErr
	}
	return c.saved, c.has, nil
}

func (c *memCache) SaveDirectory(s Saved) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.saveErr != nil {
		return c.saveErr
	}
	c.saved, c.has = s, true
	c.saves++
	return nil
}

func (c *memCache) get() (Saved, bool, int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.saved, c.has, c.saves
}

// listServer plays searx.space on 127.0.0.1: it serves its current body
// with an ETag, and 304 to a request that presents that ETag.
type listServer struct {
	*httptest.Server
	mu       sync.Mutex // guards the fields below
	status   int
	body     []byte
	etag     string
	requests int
	lastINM  string // If-None-Match of the last request
}

func newListServer(t *testing.T, body []byte, etag string) *listServer {
	s := &listServer{status: http.StatusOK, body: body, etag: etag}
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		defer s.mu.Unlock()
		s.requests++
		s.lastINM = r.Header.Get("If-None-Match")
		if s.status != http.StatusOK {
			http.Error(w, "unavailable", s.status)
			return
		}
		if s.etag != "" {
			if s.lastINM == s.etag {
				w.WriteHeader(http.StatusNotModified)
				return
			}
			w.Header().Set("ETag", s.etag)
		}
		w.Write(s.body)
	}))
	t.Cleanup(s.Close)
	return s
}

func (s *listServer) set(status int, body []byte, etag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body, s.etag = status, body, etag
}

func (s *listServer) seen() (requests int, ifNoneMatch string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests, s.lastINM
}

// logSink keeps the messages logged, for tests that check a reason is
// given.
type logSink struct {
	mu   sync.Mutex // guards msgs
	msgs []string
}

func (l *logSink) Enabled(context.Context, slog.Level) bool { return true }
func (l *logSink) Handle(_ context.Context, r slog.Record) error {
	var b strings.Builder
	b.WriteString(r.Level.String() + " " + r.Message)
	r.Attrs(func(a slog.Attr) bool {
		b.WriteString(" " + a.Key + "=" + a.Value.String())
		return true
	})
	l.mu.Lock()
	l.msgs = append(l.msgs, b.String())
	l.mu.Unlock()
	return nil
}
func (l *logSink) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *logSink) WithGroup(string) slog.Handler      { return l }

func (l *logSink) has(sub string) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	for _, m := range l.msgs {
		if strings.Contains(m, sub) {
			return true
		}
	}
	return false
}

var (
	t0 = time.Date(2025, 8, 5, 12, 0, 0, 0, time.UTC)
	t1 = t0.Add(6 * time.Hour)
)

func urlsOf(entries []Entry) []string {
	out := make([]string, len(entries))
	for i, e := range entries {
		out[i] = e.URL
	}
	return out
}

// onlyTor is a well-formed list that keeps nothing.
const onlyTor = `{"instances": {"http://abc.onion/": {"network_type": "tor", "http": {"status_code": 200}, "version": "1"}}}`

// small is a good list different from the fixture.
const small = `{"instances": {"https://fresh.example.org/": {"network_type": "normal",
  "http": {"status_code": 200}, "version": "2025.8.1",
  "timing": {"search": {"success_percentage": 100, "all": {"median": 0.3}}}, "uptime": {"uptimeDay": 100}}}}`

func TestSourceLoad(t *testing.T) {
	fixture := readFixture(t, "instances.json")
	fixtureURLs := urlsOf(mustParse(t, fixture))
	embeddedURLs := urlsOf(mustParse(t, Embedded()))
	built := SnapshotDate()
	if built.IsZero() {
		t.Fatal("the embedded snapshot does not say when it was built (metadata.built)")
	}
	dir := t.TempDir()
	file := func(name, content string) string {
		path := filepath.Join(dir, name)
		if err := writeFile(path, content); err != nil {
			t.Fatal(err)
		}
		return path
	}
	savedGood := Saved{Raw: fixture, ETag: `"old"`, LastModified: "Mon, 04 Aug 2025 10:00:00 GMT", FetchedAt: t0}

	tests := []struct {
		name       string
		status     int    // the server's answer
		body       string // the server's body ("" = the fixture)
		etag       string
		location   string // "" = the server's URL; "-" = none
		cache      *memCache
		wantFrom   string
		wantURLs   []string
		wantAt     time.Time
		wantSaved  []byte // the cache's Raw after Load (nil: no save expected)
		wantINM    string // If-None-Match the server saw
		wantLogged string
		wantErr    error // Load fails with it (and names the location)
		wantReqs   int   // requests the list server got (-1: any)
	}{
		{name: "fresh fetch is saved", status: 200, etag: `"v2"`, cache: &memCache{},
			wantFrom: FromFetched, wantURLs: fixtureURLs, wantAt: t1, wantSaved: fixture},
		{name: "fresh fetch replaces the saved copy", status: 200, body: small, etag: `"v2"`,
			cache:    &memCache{saved: savedGood, has: true},
			wantFrom: FromFetched, wantURLs: []string{"https://fresh.example.org/"}, wantAt: t1, wantSaved: []byte(small), wantINM: `"old"`},
		{name: "304 keeps the saved list", status: 200, body: small, etag: `"old"`,
			cache:    &memCache{saved: savedGood, has: true},
			wantFrom: FromNotModified, wantURLs: fixtureURLs, wantAt: t1, wantSaved: fixture, wantINM: `"old"`},
		{name: "server error: the saved copy", status: 503, cache: &memCache{saved: savedGood, has: true},
			wantFrom: FromStore, wantURLs: fixtureURLs, wantAt: t0, wantINM: `"old"`, wantLogged: "fetching the instance list failed"},
		{name: "server error, nothing saved: embedded", status: 503, cache: &memCache{},
			wantFrom: FromEmbedded, wantURLs: embeddedURLs, wantAt: built, wantLogged: "503"},
		{name: "server error, no cache: embedded", status: 503,
			wantFrom: FromEmbedded, wantURLs: embeddedURLs, wantAt: built},
		{name: "404, nothing saved: embedded, said at WARN with its date", status: 404, cache: &memCache{},
			wantFrom: FromEmbedded, wantURLs: embeddedURLs, wantAt: built, wantReqs: 1,
			wantLogged: "WARN directory: no instance list could be fetched and none is saved: using the snapshot compiled into searxgate snapshot_date=" + built.Format(time.DateOnly)},
		{name: "a challenge page never replaces a good list", status: 200, body: "<html><title>Just a moment...</title></html>",
			cache:    &memCache{saved: savedGood, has: true},
			wantFrom: FromStore, wantURLs: fixtureURLs, wantAt: t0, wantINM: `"old"`, wantLogged: "not usable"},
		{name: "a list with nothing usable never replaces a good one", status: 200, body: onlyTor,
			cache:    &memCache{saved: savedGood, has: true},
			wantFrom: FromStore, wantURLs: fixtureURLs, wantAt: t0, wantINM: `"old"`, wantLogged: "no usable instance"},
		{name: "cache unreadable: fetch still works", status: 200, cache: &memCache{loadErr: errors.New("disk on fire")},
			wantFrom: FromFetched, wantURLs: fixtureURLs, wantAt: t1, wantSaved: fixture, wantLogged: "disk on fire"},
		{name: "cache unwritable: the fetch is still used", status: 200, cache: &memCache{saveErr: errors.New("read-only")},
			wantFrom: FromFetched, wantURLs: fixtureURLs, wantAt: t1, wantLogged: "read-only"},
		{name: "saved copy damaged: embedded", status: 503, cache: &memCache{saved: Saved{Raw: []byte("{"), FetchedAt: t0}, has: true},
			wantFrom: FromEmbedded, wantURLs: embeddedURLs, wantAt: built, wantLogged: "saved instance list is not usable"},
		{name: "file", location: "testdata/instances.json", cache: &memCache{},
			wantFrom: FromFile, wantURLs: fixtureURLs, wantAt: t1},
		{name: "file URL", location: "file://testdata/instances.json",
			wantFrom: FromFile, wantURLs: fixtureURLs, wantAt: t1},
		{name: "missing file: an error naming it, never a fallback", location: "testdata/missing.json", cache: &memCache{saved: savedGood, has: true},
			wantErr: ErrListFile},
		{name: "a file that does not parse: an error naming it", location: file("broken.json", `{"instances": [`),
			cache: &memCache{saved: savedGood, has: true}, wantErr: ErrMalformed},
		{name: "a file that is not a list: an error naming it", location: file("other.json", `{"results": []}`), wantErr: ErrListFile},
		{name: "an empty file: no public instance", location: file("empty.json", ""), cache: &memCache{saved: savedGood, has: true},
			wantFrom: FromFile, wantAt: t1},
		{name: "a blank file: no public instance", location: file("blank.json", " \n\t\n"), wantFrom: FromFile, wantAt: t1},
		{name: "a file with no instances: no public instance", location: file("none.json", `{"instances": {}}`),
			cache: &memCache{saved: savedGood, has: true}, wantFrom: FromFile, wantAt: t1},
		{name: "a file whose instances the filter drops: no public instance", location: file("tor.json", onlyTor),
			wantFrom: FromFile, wantAt: t1, wantLogged: "keeps no instance"},
		{name: "none: no instance, nothing read", location: "none", cache: &memCache{saved: savedGood, has: true},
			wantFrom: FromNone, wantAt: t1},
		{name: "NONE: the same", location: " NONE ", wantFrom: FromNone, wantAt: t1},
		{name: "no location: the saved copy", location: "-", cache: &memCache{saved: savedGood, has: true},
			wantFrom: FromStore, wantURLs: fixtureURLs, wantAt: t0},
		{name: "unsupported scheme: an error", location: "ftp://127.0.0.1/instances.json", wantErr: ErrScheme},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			body := fixture
			if tt.body != "" {
				body = []byte(tt.body)
			}
			srv := newListServer(t, body, tt.etag)
			if tt.status != 200 && tt.status != 0 {
				srv.set(tt.status, body, tt.etag)
			}
			loc := srv.URL + "/data/instances.json"
			switch tt.location {
			case "":
			case "-":
				loc = ""
			default:
				loc = tt.location
			}
			sink := &logSink{}
			src := &Source{
				Location: loc,
				Fetcher:  NewHTTPFetcher(5*time.Second, 1<<20, "searxgate/test"),
				Filter:   DefaultFilter(),
				Logger:   slog.New(sink),
				Clock:    clock.NewFake(t1),
			}
			if tt.cache != nil {
				src.Cache = tt.cache
			}
			list, err := src.Load(context.Background())
			reqs, _ := srv.seen()
			if tt.location != "" && tt.location != "-" && reqs != 0 {
				t.Errorf("the list server got %d requests for location %q", reqs, tt.location)
			}
			if tt.wantReqs > 0 && reqs != tt.wantReqs {
				t.Errorf("the list server got %d requests, want %d", reqs, tt.wantReqs)
			}
			if tt.wantErr != nil {
				if !errors.Is(err, tt.wantErr) || !errors.Is(err, ErrListFile) && !errors.Is(err, ErrScheme) {
					t.Fatalf("err %v, want %v", err, tt.wantErr)
				}
				if !strings.Contains(err.Error(), strings.TrimPrefix(tt.location, "file://")) {
					t.Errorf("error %q does not name %q", err, tt.location)
				}
				if list.Entries != nil || list.From != "" {
					t.Errorf("a failed load returned %+v", list)
				}
				if tt.cache != nil {
					if _, _, saves := tt.cache.get(); saves != 0 {
						t.Errorf("a failed load saved %d times", saves)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if list.From != tt.wantFrom || !list.FetchedAt.Equal(tt.wantAt) {
				t.Errorf("From %q at %v, want %q at %v", list.From, list.FetchedAt, tt.wantFrom, tt.wantAt)
			}
			if got := urlsOf(list.Entries); !slices.Equal(got, tt.wantURLs) {
				t.Errorf("urls = %v\nwant %v", got, tt.wantURLs)
			}
			if _, inm := srv.seen(); inm != tt.wantINM {
				t.Errorf("server saw If-None-Match %q, want %q", inm, tt.wantINM)
			}
			if tt.cache != nil {
				saved, has, saves := tt.cache.get()
				switch {
				case tt.wantSaved == nil && saves != 0:
					t.Errorf("saved %d times, want none", saves)
				case tt.wantSaved != nil && (!has || saves != 1 || string(saved.Raw) != string(tt.wantSaved) || !saved.FetchedAt.Equal(t1)):
					t.Errorf("saved %d times: %d bytes at %v, want %d bytes at %v", saves, len(saved.Raw), saved.FetchedAt, len(tt.wantSaved), t1)
				}
				if tt.wantFrom == FromFetched && tt.wantSaved != nil && saved.ETag != tt.etag {
					t.Errorf("saved ETag %q, want %q", saved.ETag, tt.etag)
				}
			}
			if tt.wantLogged != "" && !sink.has(tt.wantLogged) {
				t.Errorf("log lacks %q: %v", tt.wantLogged, sink.msgs)
			}
		})
	}
}

func mustParse(t *testing.T, data []byte) []Entry {
	t.Helper()
	e, err := Parse(data, DefaultFilter())
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// stubFetcher answers every fetch the same way.
type stubFetcher struct {
	res FetchResult
	err error
}

func (f stubFetcher) Fetch(context.Context, string, Saved) (FetchResult, error) { return f.res, f.err }

func TestSourceLoadEdges(t *testing.T) {
	t.Run("304 with nothing saved: embedded", func(t *testing.T) {
		src := &Source{Location: "https://list.example/", Fetcher: stubFetcher{res: FetchResult{NotModified: true}}, Cache: &memCache{}, Filter: DefaultFilter()}
		list, err := src.Load(context.Background())
		if err != nil || list.From != FromEmbedded {
			t.Fatalf("From %q, err %v", list.From, err)
		}
	})
	t.Run("no fetcher: embedded", func(t *testing.T) {
		sink := &logSink{}
		src := &Source{Location: "https://list.example/", Filter: DefaultFilter(), Logger: slog.New(sink)}
		list, err := src.Load(context.Background())
		if err != nil || list.From != FromEmbedded || !sink.has("no fetcher") {
			t.Fatalf("From %q, err %v, log %v", list.From, err, sink.msgs)
		}
	})
	t.Run("nothing passes the filter anywhere", func(t *testing.T) {
		f := DefaultFilter()
		f.Allow = []string{"nowhere.invalid"}
		src := &Source{Location: "https://list.example/", Fetcher: stubFetcher{res: FetchResult{Body: readFixture(t, "instances.json")}}, Filter: f}
		list, err := src.Load(context.Background())
		if !errors.Is(err, ErrNoInstances) || list.Entries != nil {
			t.Fatalf("err %v, list %+v", err, list)
		}
	})
	t.Run("a file is not saved as the fetched copy", func(t *testing.T) {
		cache := &memCache{}
		dir := t.TempDir()
		path := filepath.Join(dir, "list.json")
		if err := writeFile(path, small); err != nil {
			t.Fatal(err)
		}
		src := &Source{Location: path, Cache: cache, Filter: DefaultFilter(), Clock: clock.NewFake(t1)}
		list, err := src.Load(context.Background())
		if err != nil || list.From != FromFile || len(list.Entries) != 1 {
			t.Fatalf("list %+v, err %v", list, err)
		}
		if _, has, _ := cache.get(); has {
			t.Fatal("a file read was saved to the cache")
		}
	})
}

func writeFile(path, content string) error {
	return os.WriteFile(path, []byte(content), 0o644)
}
