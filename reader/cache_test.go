package reader

import (
	"context"
	"testing"
)

// With NoCache every read fetches the page again, and nothing is kept.
func TestNoCacheFetchesAgain(t *testing.T) {
	srv, hits := site(t)
	r, base := publicReader(t, srv, func(c *Config) { c.NoCache = true })
	for i := range 2 {
		res, err := r.Read(context.Background(), Request{URL: base + "/article"})
		if err != nil {
			t.Fatal(err)
		}
		if res.Cached {
			t.Fatalf("read %d came from the cache", i)
		}
	}
	if n := hits.Load(); n != 2 || r.cache.len() != 0 {
		t.Fatalf("%d fetches for two reads, %d pages kept; want 2 and none", n, r.cache.len())
	}
}
