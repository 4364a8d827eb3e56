package main

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"runtime"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/searxgate/searxgate/results"
)

// hostileAnswer is a JSON answer of n results, each of its own (so that
// no rule takes it for a template) and about the query: about 190 bytes a
// result, 20,000 of them under the upstream's 4 MiB cap.
func hostileAnswer(n int) []byte {
	var b strings.Builder
	b.Grow(n * 200)
	b.WriteString(`{"query":"hello world","number_of_results":0,"results":[`)
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		fmt.Fprintf(&b, `{"url":"https://spam.example/%d","title":"hello world %d","content":"hello world <b>%d</b> &amp; more hello world, item %d","engine":"e","engines":["e"],"positions":[1],"score":1}`,
			i, i, i, i)
	}
	b.WriteString(`],"answers":[],"corrections":[],"infoboxes":[],"suggestions":[],"unresponsive_engines":[]}`)
	return []byte(b.String())
}

// hostilePage is hostileAnswer's results as a minimal SearXNG results
// page (about 150 bytes a result), offering JSON.
func hostilePage(n int) []byte {
	var b strings.Builder
	b.Grow(n * 160)
	b.WriteString(`<!DOCTYPE html><html><body class="search_endpoint"><form><input id="q" name="q" type="text" value="hello world"></form><div id="results"><div id="urls">`)
	for i := range n {
		fmt.Fprintf(&b, `<article class="result"><a class="url_header" href="https://spam.example/%d"></a><h3>hello world %d</h3><p class="content">hello world item %d</p></article>`, i, i, i)
	}
	b.WriteString(`</div><div id="apis"><form><input type="hidden" name="format" value="json"></form></div></div></body></html>`)
	return []byte(b.String())
}

// heapBytes is the heap's live and not yet swept objects now (runtime/metrics).
func heapBytes() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// allocBytes is every byte the heap allocated so far.
func allocBytes() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestCachedHostilePageStaysSmall: an instance answering 20,000 results
// (about 4 MB) is cached with results.MaxResults of them, and 24 clients
// re-reading that cached page at once, as HTML and JSON, get answers of
// bounded size, each costing little, with the heap under the soft memory
// limit searxgate logs.
func TestCachedHostilePageStaysSmall(t *testing.T) {
	const total = 20_000
	body, html := hostileAnswer(total), hostilePage(total)
	for _, b := range [][]byte{body, html} {
		if len(b) < 3<<20 || len(b) > 4<<20 {
			t.Fatalf("a hostile answer is %d bytes, want about 4 MB under the 4 MiB cap", len(b))
		}
	}
	var searches, jsonSearches atomic.Int64
	inst := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/config":
			_, _ = w.Write([]byte(`{"version":"2024.10.5","limiter":{"enabled":false},"public_instance":false,"engines":[]}`))
		case r.URL.Path == "/search" && r.URL.Query().Get("format") == "json":
			searches.Add(1)
			jsonSearches.Add(1)
			_, _ = w.Write(body)
		case r.URL.Path == "/search":
			searches.Add(1)
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			_, _ = w.Write(html)
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(inst.Close)
	g := startGateway(t, "none", "", "--instance", inst.URL+"/")
	limit, _ := g.app.memoryBound()

	// Page 1 is read from the instance's HTML page (which says it offers
	// JSON), page 2 from its JSON.
	pages := []string{"/search?q=hello+world&format=", "/search?q=hello+world&pageno=2&format="}
	for _, page := range pages {
		first := g.get(t, page+"html", nil)
		if first.status != 200 || first.header.Get("X-Searxgate-Cache") != "miss" {
			t.Fatalf("first search: %d %s %.300s", first.status, first.header.Get("X-Searxgate-Cache"), first.body)
		}
		if n := strings.Count(string(first.body), `href="https://spam.example/`); n == 0 || n > 2*results.MaxResults {
			t.Fatalf("the page links %d results, want at most %d (twice each)", n, results.MaxResults)
		}
	}
	if m := g.app.proxy.Metrics().ResultsDropped(); m != 2*(total-results.MaxResults) {
		t.Errorf("%d results counted dropped, want %d", m, 2*(total-results.MaxResults))
	}
	const maxPage = results.MaxAnswerBytes + results.MaxResults*2048
	runtime.GC()
	allocs0 := allocBytes()
	const clients, rounds = 24, 4
	var (
		wg       sync.WaitGroup
		peak     atomic.Uint64
		mu       sync.Mutex // guards problems
		problems []string
	)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			format, page := []string{"html", "json"}[c%2], pages[c/2%2]
			for range rounds {
				a := g.get(t, page+format, nil)
				if h := heapBytes(); h > peak.Load() {
					peak.Store(h) // a racy max is good enough: any sample over the limit fails
				}
				if a.status != 200 || a.header.Get("X-Searxgate-Cache") != "hit" || len(a.body) > maxPage {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("%s: %d %s, %d bytes", format, a.status, a.header.Get("X-Searxgate-Cache"), len(a.body)))
					mu.Unlock()
				}
			}
		}()
	}
	wg.Wait()
	if len(problems) > 0 {
		t.Fatalf("%d of %d cached answers wrong (want 200, hit, ≤ %d bytes): %q", len(problems), clients*rounds, maxPage, problems[:min(len(problems), 5)])
	}
	if got := searches.Load(); got != 2 {
		t.Errorf("the instance was searched %d times, want twice (the rest from the cache)", got)
	}
	if got := jsonSearches.Load(); got != 1 {
		t.Errorf("the instance was searched %d times as JSON, want once (page 2)", got)
	}
	perHit := (allocBytes() - allocs0) / (clients * rounds)
	t.Logf("heap peak %d MiB (soft limit %d MiB), %d KiB allocated per cached answer", peak.Load()>>20, limit>>20, perHit>>10)
	if p := peak.Load(); p > uint64(limit) {
		t.Errorf("heap reached %d MiB with %d clients on the cached page, over the soft limit of %d MiB", p>>20, clients, limit>>20)
	}
	// The whole 20,000 results read back and rendered would cost tens of
	// megabytes a hit; the bounded page, well under 8 MiB (the test
	// client's own reads included).
	if perHit > 8<<20 {
		t.Errorf("%d KiB allocated per cached answer, want < 8 MiB", perHit>>10)
	}
}
