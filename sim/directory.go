package sim

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"time"
)

// Prior is what the fleet's directory claims about one instance, next to
// what is true.
type Prior struct {
	URL       string
	ID        string
	Behaviour Behaviour
	// ClaimedMedian is the directory's timing.search.all.median.
	ClaimedMedian time.Duration
	// Latency is the instance's configured latency (what a search really
	// waits, before jitter).
	Latency time.Duration
	// ClaimedUptime is the directory's uptime.uptimeDay.
	ClaimedUptime float64
	// Lies is set when the claimed median was drawn far from the truth on
	// purpose (too slow for a fast instance, too fast for a slow one).
	// Instances that do not answer well (dead, hanging, challenged, ...)
	// look healthy in the directory whether or not Lies is set, as the
	// real list lags behind the instances it describes.
	Lies bool
}

// The searx.space instances.json shapes this package writes.
type (
	dirFile struct {
		Metadata   dirMeta                `json:"metadata"`
		Instances  map[string]dirInstance `json:"instances"`
		Hashes     []any                  `json:"hashes"`
		Engines    map[string]any         `json:"engines"`
		Categories []string               `json:"categories"`
	}
	dirMeta struct {
		Timestamp int64          `json:"timestamp"`
		IPs       map[string]any `json:"ips"`
		IPv6      bool           `json:"ipv6"`
	}
	dirInstance struct {
		Analytics       bool              `json:"analytics"`
		Comments        []string          `json:"comments"`
		AlternativeURLs map[string]string `json:"alternativeUrls"`
		Main            bool              `json:"main"`
		NetworkType     string            `json:"network_type"`
		HTTP            dirHTTP           `json:"http"`
		Version         *string           `json:"version"`
		GitURL          string            `json:"git_url"`
		Generator       string            `json:"generator"`
		ContactURL      any               `json:"contact_url"`
		DocsURL         string            `json:"docs_url"`
		Timing          dirTiming         `json:"timing"`
		TLS             dirGrade          `json:"tls"`
		HTML            dirGrade          `json:"html"`
		Uptime          *dirUptime        `json:"uptime"`
		Network         dirNetwork        `json:"network"`
		CountryName     string            `json:"country_name"`
	}
	dirHTTP struct {
		StatusCode *int    `json:"status_code"`
		Error      *string `json:"error"`
		Grade      string  `json:"grade,omitempty"`
	}
	dirTiming struct {
		Initial  dirInitial `json:"initial"`
		Search   dirSearch  `json:"search"`
		SearchWP dirSearch  `json:"search_wp"`
		SearchGo dirSearch  `json:"search_go"`
	}
	dirInitial struct {
		SuccessPercentage float64  `json:"success_percentage"`
		All               dirValue `json:"all"`
		Server            dirValue `json:"server"`
	}
	dirValue struct {
		Value float64 `json:"value"`
	}
	dirSearch struct {
		SuccessPercentage float64  `json:"success_percentage"`
		All               *dirStat `json:"all,omitempty"`
		Server            *dirStat `json:"server,omitempty"`
		Load              *dirStat `json:"load,omitempty"`
		Error             string   `json:"error,omitempty"`
	}
	dirStat struct {
		Median float64 `json:"median"`
		Stdev  float64 `json:"stdev"`
		Mean   float64 `json:"mean"`
	}
	dirGrade struct {
		Grade string `json:"grade"`
	}
	dirUptime struct {
		Day   float64 `json:"uptimeDay"`
		Week  float64 `json:"uptimeWeek"`
		Month float64 `json:"uptimeMonth"`
		Year  float64 `json:"uptimeYear"`
	}
	dirNetwork struct {
		IPv6       bool           `json:"ipv6"`
		IPs        map[string]any `json:"ips"`
		ASNPrivacy int            `json:"asn_privacy"`
	}
)

// Directory returns a searx.space-shaped instances.json for the fleet:
// every instance's URL with timing, uptime and version fields (the priors,
// some of which lie, drawn from the seed), plus entries a directory reader
// must leave out, none of which points off loopback: a tor and an i2p
// instance, one with an HTTP error set, one without a version, one that
// answered 502, one with a low search success rate, one with a low uptime,
// and an alternative URL of the first instance listed as its own, non-main
// entry. The filtered entries' URLs start with FilteredPrefix unless they
// are .onion or .i2p.
func (f *Fleet) Directory() []byte {
	return bytes.Clone(f.dir)
}

// Priors returns, by instance URL, what Directory claims about each
// instance and what is true.
func (f *Fleet) Priors() map[string]Prior {
	out := make(map[string]Prior, len(f.priors))
	for k, v := range f.priors {
		out[k] = v
	}
	return out
}

// FilteredPrefix starts the URL of every loopback entry of Directory that
// a reader must filter out (port 9, where nothing of the fleet listens).
const FilteredPrefix = "http://127.0.0.1:9/"

// The URLs of Directory's entries that a reader must filter out.
const (
	DirTor         = "http://simtorsimtorsimtorsimtorsimtorsimtorsimtorsimtor2345.onion/"
	DirI2P         = "http://simi2psimi2psimi2psimi2psimi2psimi2psimi2p234567.b32.i2p/"
	DirHTTPError   = FilteredPrefix + "http-error/"
	DirNoVersion   = FilteredPrefix + "no-version/"
	DirHTTP502     = FilteredPrefix + "http-502/"
	DirLowSuccess  = FilteredPrefix + "low-success/"
	DirLowUptime   = FilteredPrefix + "low-uptime/"
	DirAlternative = FilteredPrefix + "alternative/"
)

// DirFiltered lists the URLs of Directory's entries that a reader must
// filter out.
func DirFiltered() []string {
	return []string{DirTor, DirI2P, DirHTTPError, DirNoVersion, DirHTTP502, DirLowSuccess, DirLowUptime, DirAlternative}
}

func round3(v float64) float64 { return math.Round(v*1000) / 1000 }

// goodEntry is a healthy-looking directory entry with the given median
// search time in seconds.
func goodEntry(rnd *rand.Rand, median float64) dirInstance {
	version := searxngVersion
	status := 200
	server := round3(median * 0.6)
	load := round3(median - server)
	return dirInstance{
		Comments:        []string{},
		AlternativeURLs: map[string]string{},
		Main:            true,
		NetworkType:     "normal",
		HTTP:            dirHTTP{StatusCode: &status, Grade: "A+"},
		Version:         &version,
		GitURL:          "https://github.com/searxng/searxng",
		Generator:       "searxng/" + searxngVersion,
		ContactURL:      false,
		DocsURL:         "https://docs.searxng.org",
		Timing: dirTiming{
			Initial: dirInitial{SuccessPercentage: 100, All: dirValue{round3(0.2 + rnd.Float64()*0.3)}, Server: dirValue{round3(0.01 + rnd.Float64()*0.05)}},
			Search: dirSearch{
				SuccessPercentage: 100,
				All:               &dirStat{Median: round3(median), Stdev: round3(median * 0.15), Mean: round3(median * 1.05)},
				Server:            &dirStat{Median: server, Stdev: round3(server * 0.1), Mean: round3(server * 1.05)},
				Load:              &dirStat{Median: load, Stdev: round3(load * 0.1), Mean: round3(load * 1.05)},
			},
			SearchWP: dirSearch{SuccessPercentage: 100, All: &dirStat{Median: round3(median * 1.2), Stdev: 0.1, Mean: round3(median * 1.25)}},
			SearchGo: dirSearch{SuccessPercentage: 0, Error: "No result"},
		},
		TLS:         dirGrade{"A+"},
		HTML:        dirGrade{"V"},
		Uptime:      &dirUptime{Day: round3(99 + rnd.Float64()), Week: round3(98 + 2*rnd.Float64()), Month: round3(97 + 3*rnd.Float64()), Year: round3(95 + 5*rnd.Float64())},
		Network:     dirNetwork{IPv6: rnd.IntN(2) == 0, IPs: map[string]any{}, ASNPrivacy: 0},
		CountryName: []string{"Germany", "France", "Netherlands", "Finland", "United States", "Canada"}[rnd.IntN(6)],
	}
}

// directory builds Directory's bytes and the priors, from the seed.
func (f *Fleet) directory() ([]byte, map[string]Prior, error) {
	rnd := rand.New(rand.NewPCG(uint64(f.cfg.Seed), 0xd12ec7))
	file := dirFile{
		Metadata:   dirMeta{Timestamp: f.start.Unix(), IPs: map[string]any{}, IPv6: false},
		Instances:  map[string]dirInstance{},
		Hashes:     []any{},
		Engines:    map[string]any{},
		Categories: []string{"general", "images", "videos", "news", "map", "music", "it", "science", "files", "social media"},
	}
	priors := make(map[string]Prior, len(f.instances))
	for _, in := range f.instances {
		lat := in.cfg.Latency
		truth := lat.Seconds() + 0.05 // what a search costs, seen from afar
		claimed := truth * (0.85 + 0.3*rnd.Float64())
		lies := rnd.IntN(4) == 0
		if lies {
			if truth < 0.6 {
				claimed = 2.5 + 1.5*rnd.Float64()
			} else {
				claimed = 0.2 + 0.2*rnd.Float64()
			}
		}
		e := goodEntry(rnd, claimed)
		priors[in.url] = Prior{
			URL: in.url, ID: in.cfg.ID, Behaviour: in.cfg.Behaviour,
			ClaimedMedian: time.Duration(round3(claimed) * float64(time.Second)),
			Latency:       lat, ClaimedUptime: e.Uptime.Day, Lies: lies,
		}
		file.Instances[in.url] = e
	}

	bad := func(mut func(*dirInstance)) dirInstance {
		e := goodEntry(rnd, 0.4+rnd.Float64())
		mut(&e)
		return e
	}
	file.Instances[DirTor] = bad(func(e *dirInstance) { e.NetworkType = "tor" })
	file.Instances[DirI2P] = bad(func(e *dirInstance) { e.NetworkType = "i2p" })
	file.Instances[DirHTTPError] = bad(func(e *dirInstance) {
		msg := "Connection refused"
		e.HTTP = dirHTTP{Error: &msg}
		e.Version = nil
		e.Timing.Search = dirSearch{SuccessPercentage: 0, Error: "Connection refused"}
		e.TLS, e.HTML = dirGrade{}, dirGrade{}
	})
	file.Instances[DirNoVersion] = bad(func(e *dirInstance) { e.Version = nil; e.Generator = "" })
	file.Instances[DirHTTP502] = bad(func(e *dirInstance) {
		code := 502
		e.HTTP = dirHTTP{StatusCode: &code}
		e.Timing.Search = dirSearch{SuccessPercentage: 0, Error: "HTTP status code 502"}
	})
	file.Instances[DirLowSuccess] = bad(func(e *dirInstance) { e.Timing.Search.SuccessPercentage = 12.5 })
	file.Instances[DirLowUptime] = bad(func(e *dirInstance) {
		e.Uptime = &dirUptime{Day: 31.2, Week: 40.5, Month: 55.1, Year: 60.3}
	})
	file.Instances[DirAlternative] = bad(func(e *dirInstance) { e.Main = false })
	if len(f.instances) > 0 {
		first := f.instances[0].url
		e := file.Instances[first]
		e.AlternativeURLs = map[string]string{DirAlternative: "normal"}
		file.Instances[first] = e
	}
	b, err := json.MarshalIndent(file, "", " ")
	if err != nil {
		return nil, nil, fmt.Errorf("sim: directory: %w", err)
	}
	return b, priors, nil
}
