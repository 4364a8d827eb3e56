package store

import (
	"bytes"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// stateJSON is a pool state the size the pool writes (~400 bytes).
func stateJSON(url string, i int) []byte {
	return fmt.Appendf(nil, `{"url":%q,"latency_ewma_ms":%d.25,"failure_ewma":0.0%03d,"samples":%d,`+
		`"circuit":"closed","cooldown_until":"2025-03-14T16:%02d:00Z","consecutive_failures":%d,`+
		`"consecutive_soft":0,"successes":%d,"failures":%d,"refusals":%d,"soft_strikes":%d,`+
		`"last_ok":"2025-03-14T15:09:26.535897932Z","last_failure":"2025-03-14T14:59:01Z",`+
		`"prior_ms":900,"tier":"public","max_in_flight":2,"health":%d,"disabled":false}`,
		url, 300+i%900, i%1000, i, i%60, i%4, 1000+i, i%50, i%7, i%11, 50+i%50)
}

// writeStore creates a store at path holding n pool entries, n/10 cache
// entries, a directory and an operator change, closes it and returns the
// file's bytes.
// pagesInUse is how many bytes of a store file its newest meta page says
// are pages; bbolt grows the file past them, by up to allocSize.
func pagesInUse(t testing.TB, b []byte) int {
	t.Helper()
	m0, err0 := parseMeta(b)
	ps := int(m0.pageSize)
	if err0 != nil || len(b) < 2*ps {
		t.Fatalf("meta page 0: %v", err0)
	}
	m1, err1 := parseMeta(b[ps:])
	if err1 == nil && m1.txid > m0.txid {
		m0 = m1
	}
	return int(m0.pgid) * ps
}

func writeStore(t testing.TB, path string, n int) []byte {
	t.Helper()
	s, err := Open(path, Options{Logger: discard(), Clock: fixedClock()})
	if err != nil {
		t.Fatal(err)
	}
	b := Batch{Pool: map[string][]byte{}, Caps: map[string][]byte{}}
	for i := range n {
		u := fmt.Sprintf("https://searx-%04d.example.org/", i)
		b.Pool[u] = stateJSON(u, i)
		if i%3 == 0 {
			b.Caps[u] = []byte(`{"json":true,"limiter":false,"learned_at":"2025-03-14T15:00:00Z"}`)
		}
		if i%10 == 0 {
			b.Cache = append(b.Cache, CacheEntry{Key: fmt.Sprintf("q=%d", i), Value: stateJSON(u, i), StoredAt: t0, Expires: t0.Add(time.Hour)})
		}
	}
	if err := s.WriteBatch(b); err != nil {
		t.Fatal(err)
	}
	if err := s.PutOperator(Operator{URL: "https://own.home.arpa/", Added: true, Tier: "own", UpdatedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveDirectory(Directory{Raw: bytes.Repeat([]byte("x"), 3000), ETag: "e", FetchedAt: t0}); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

func writeRawBolt(t *testing.T, path string, fn func(*bolt.Tx) error) {
	t.Helper()
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.Update(fn); err != nil {
		t.Fatal(err)
	}
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestDamagedFileIsMovedAside(t *testing.T) {
	ps := os.Getpagesize()
	cases := []struct {
		name    string
		prepare func(t *testing.T, path string)
		reason  string // part of the logged reason
	}{
		{"garbage", func(t *testing.T, path string) {
			b := make([]byte, 64<<10)
			r := rand.New(rand.NewPCG(1, 2))
			for i := range b {
				b[i] = byte(r.Uint32())
			}
			writeFile(t, path, b)
		}, "magic"},
		{"text", func(t *testing.T, path string) {
			writeFile(t, path, []byte("this is not a database\n"))
		}, "too short"},
		{"zeros", func(t *testing.T, path string) {
			writeFile(t, path, make([]byte, 4*ps))
		}, "magic"},
		{"truncated to half", func(t *testing.T, path string) {
			b := writeStore(t, path, 300)
			writeFile(t, path, b[:pagesInUse(t, b)/2])
		}, "truncated"},
		{"truncated into the meta pages", func(t *testing.T, path string) {
			b := writeStore(t, path, 10)
			writeFile(t, path, b[:100])
		}, "truncated"},
		{"both meta checksums broken", func(t *testing.T, path string) {
			b := writeStore(t, path, 10)
			b[pageHeaderSize+40] ^= 0xff // pgid of meta 0
			b[ps+pageHeaderSize+40] ^= 0xff
			writeFile(t, path, b)
		}, "checksum"},
		{"data pages zeroed", func(t *testing.T, path string) {
			b := writeStore(t, path, 200)
			clear(b[2*ps:])
			writeFile(t, path, b)
		}, "says it is page 0"},
		{"keys out of order (bbolt's check)", func(t *testing.T, path string) {
			s := openT(t, path, Options{})
			// Enough state that the bucket has pages of its own: bbolt
			// does not check the key order of inline buckets.
			pool := map[string][]byte{"https://key-bbb/": []byte("1"), "https://key-ccc/": []byte("2")}
			for i := range 20 {
				u := fmt.Sprintf("https://key-x%02d/", i)
				pool[u] = stateJSON(u, i)
			}
			if err := s.WriteBatch(Batch{Pool: pool}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			b, _ := os.ReadFile(path)
			if n := bytes.Count(b, []byte("key-ccc")); n == 0 {
				t.Fatal("key not found in the file")
			}
			writeFile(t, path, bytes.ReplaceAll(b, []byte("key-ccc"), []byte("key-aaa")))
			// The store's own walk finds it, before bbolt's (which panics).
		}, "out of order"},
		{"another program's bbolt file", func(t *testing.T, path string) {
			writeRawBolt(t, path, func(tx *bolt.Tx) error {
				b, err := tx.CreateBucket([]byte("other"))
				if err != nil {
					return err
				}
				return b.Put([]byte("k"), []byte("v"))
			})
		}, "not a searxgate store"},
		{"newer schema", func(t *testing.T, path string) {
			writeStore(t, path, 10)
			writeRawBolt(t, path, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketMeta).Put(keySchema, []byte(fmt.Sprint(SchemaVersion+1)))
			})
		}, "newer than"},
		{"unreadable schema", func(t *testing.T, path string) {
			writeStore(t, path, 10)
			writeRawBolt(t, path, func(tx *bolt.Tx) error {
				return tx.Bucket(bucketMeta).Put(keySchema, []byte("one"))
			})
		}, "unreadable schema"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			path := testPath(t)
			if err := os.MkdirAll(strings.TrimSuffix(path, FileName), 0o700); err != nil {
				t.Fatal(err)
			}
			c.prepare(t, path)
			before, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			var logs bytes.Buffer
			s := openT(t, path, Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})

			want := path + ".damaged-20250314T150926Z"
			if s.Recovered() != want {
				t.Fatalf("Recovered() = %q, want %q (log: %s)", s.Recovered(), want, logs.String())
			}
			moved, err := os.ReadFile(want)
			if err != nil || !bytes.Equal(moved, before) {
				t.Fatalf("the damaged file was not moved aside intact (%v)", err)
			}
			log := logs.String()
			for _, w := range []string{"moved aside", "path=" + path + " ", "moved_to=" + want, c.reason} {
				if !strings.Contains(log, w) {
					t.Errorf("log %q does not contain %q", log, w)
				}
			}
			// The fresh file is empty and works, across a reopen.
			if p, err := s.LoadPool(); err != nil || len(p) != 0 {
				t.Fatalf("fresh store's pool = %d entries, %v", len(p), err)
			}
			if err := s.WriteBatch(Batch{Pool: map[string][]byte{"https://a/": []byte("1")}}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			s2 := openT(t, path, Options{})
			if s2.Recovered() != "" {
				t.Fatalf("the fresh file was found damaged too: %s", s2.Recovered())
			}
			if p, err := s2.LoadPool(); err != nil || string(p["https://a/"]) != "1" {
				t.Fatalf("fresh store after reopen = %s, %v", dump(p), err)
			}
		})
	}
}

// Two damaged files in the same second get distinct names.
func TestDamagedTwiceInOneSecond(t *testing.T) {
	path := testPath(t)
	if err := os.MkdirAll(strings.TrimSuffix(path, FileName), 0o700); err != nil {
		t.Fatal(err)
	}
	var got []string
	for range 2 {
		writeFile(t, path, []byte("garbage garbage garbage garbage garbage garbage garbage garbage garbage garbage garbage"))
		s := openT(t, path, Options{})
		got = append(got, s.Recovered())
		s.Close()
	}
	want := []string{path + ".damaged-20250314T150926Z", path + ".damaged-20250314T150926Z-2"}
	if got[0] != want[0] || got[1] != want[1] {
		t.Fatalf("Recovered() = %q, want %q", got, want)
	}
}

// A torn write of the newest meta page leaves the previous transaction,
// which bbolt falls back to: the file is not damaged and keeps that state.
func TestNewestMetaBrokenFallsBackToPrevious(t *testing.T) {
	path := testPath(t)
	s := openT(t, path, Options{})
	for i := 1; i <= 2; i++ {
		if err := s.WriteBatch(Batch{Pool: map[string][]byte{"https://a/": fmt.Appendf(nil, "%d", i)}}); err != nil {
			t.Fatal(err)
		}
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	ps := os.Getpagesize()
	m0, err0 := parseMeta(b)
	m1, err1 := parseMeta(b[ps:])
	if err0 != nil || err1 != nil {
		t.Fatal(err0, err1)
	}
	newest := 0
	if m1.txid > m0.txid {
		newest = ps
	}
	b[newest+pageHeaderSize+48] ^= 0x01 // txid: the checksum no longer matches
	writeFile(t, path, b)

	s = openT(t, path, Options{})
	if s.Recovered() != "" {
		t.Fatalf("moved aside a file bbolt can read: %s", s.Recovered())
	}
	p, err := s.LoadPool()
	if err != nil || string(p["https://a/"]) != "1" {
		t.Fatalf("after falling back: %s, %v; want the first batch", dump(p), err)
	}
}

func writeFile(t testing.TB, path string, b []byte) {
	t.Helper()
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
}
