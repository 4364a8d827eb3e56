package sim

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"
)

type dirEntry struct {
	Main        bool              `json:"main"`
	NetworkType string            `json:"network_type"`
	Version     *string           `json:"version"`
	AltURLs     map[string]string `json:"alternativeUrls"`
	HTTP        struct {
		StatusCode *int    `json:"status_code"`
		Error      *string `json:"error"`
	} `json:"http"`
	Timing struct {
		Search struct {
			SuccessPercentage float64 `json:"success_percentage"`
			All               *struct {
				Median float64 `json:"median"`
			} `json:"all"`
		} `json:"search"`
	} `json:"timing"`
	Uptime *struct {
		Day   float64 `json:"uptimeDay"`
		Month float64 `json:"uptimeMonth"`
	} `json:"uptime"`
}

// readerKeeps is the filter a directory reader is expected to apply.
func readerKeeps(e dirEntry) bool {
	return e.Main && e.NetworkType == "normal" && e.Version != nil && e.HTTP.Error == nil &&
		e.HTTP.StatusCode != nil && *e.HTTP.StatusCode == 200 &&
		e.Timing.Search.SuccessPercentage >= 80 && e.Uptime != nil && e.Uptime.Day >= 90
}

func TestDirectory(t *testing.T) {
	clock := newClock()
	cfgs, err := Mix("mixed", 40, 5)
	if err != nil {
		t.Fatal(err)
	}
	start := func(seed int64) *Fleet {
		return startFleet(t, Config{Instances: cfgs, InMemory: true, Seed: seed, Now: clock.Now})
	}
	f := start(5)
	var file struct {
		Metadata struct {
			Timestamp int64 `json:"timestamp"`
		} `json:"metadata"`
		Instances map[string]dirEntry `json:"instances"`
	}
	if err := json.Unmarshal(f.Directory(), &file); err != nil {
		t.Fatal(err)
	}
	if file.Metadata.Timestamp != clock.Now().Unix() {
		t.Errorf("timestamp %d", file.Metadata.Timestamp)
	}
	if len(file.Instances) != 40+len(DirFiltered()) {
		t.Errorf("%d entries, want %d", len(file.Instances), 40+len(DirFiltered()))
	}
	for _, in := range f.Instances() {
		e, ok := file.Instances[in.URL()]
		if !ok {
			t.Errorf("%s missing", in.URL())
			continue
		}
		if !readerKeeps(e) {
			t.Errorf("%s would be filtered out: %+v", in.URL(), e)
		}
	}
	for _, u := range DirFiltered() {
		e, ok := file.Instances[u]
		if !ok {
			t.Errorf("%s missing", u)
			continue
		}
		if readerKeeps(e) {
			t.Errorf("%s passes the filter", u)
		}
		if !strings.HasPrefix(u, FilteredPrefix) && !strings.HasSuffix(u, ".onion/") && !strings.HasSuffix(u, ".i2p/") {
			t.Errorf("%s points off loopback", u)
		}
	}
	if alt := file.Instances[f.Instances()[0].URL()].AltURLs; alt[DirAlternative] == "" {
		t.Errorf("first instance's alternativeUrls = %v", alt)
	}

	// Priors: the claim is in the file; some lie, the others are near the truth.
	lies := 0
	for u, p := range f.Priors() {
		claimed := time.Duration(file.Instances[u].Timing.Search.All.Median * float64(time.Second))
		if d := claimed - p.ClaimedMedian; d > time.Millisecond || d < -time.Millisecond {
			t.Errorf("%s: prior %v, file %v", u, p.ClaimedMedian, claimed)
		}
		truth := p.Latency + 50*time.Millisecond
		near := claimed > truth*8/10 && claimed < truth*12/10
		if p.Lies {
			lies++
			if near {
				t.Errorf("%s lies but claims %v for %v", u, claimed, truth)
			}
		} else if !near {
			t.Errorf("%s does not lie but claims %v for %v", u, claimed, truth)
		}
	}
	if lies == 0 || lies > 20 {
		t.Errorf("%d of 40 priors lie, want some", lies)
	}

	// Deterministic from the seed.
	if again := start(5); !bytes.Equal(again.Directory(), f.Directory()) {
		t.Error("the same seed gave another directory")
	}
	other := start(6)
	if bytes.Equal(other.Directory(), f.Directory()) {
		t.Error("another seed gave the same directory")
	}
}
