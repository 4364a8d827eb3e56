package store

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"
)

// pagesOf returns the ids of the pages of a bbolt file whose header has
// the given flags and says it is that page.
func pagesOf(b []byte, ps int, flags uint16) []int {
	var ids []int
	for id := 2; (id+1)*ps <= len(b); id++ {
		p := b[id*ps:]
		if int(ne.Uint64(p)) == id && ne.Uint16(p[8:]) == flags {
			ids = append(ids, id)
		}
	}
	return ids
}

func newestMeta(t *testing.T, b []byte, ps int) boltMeta {
	t.Helper()
	m0, err0 := parseMeta(b)
	m1, err1 := parseMeta(b[ps:])
	switch {
	case err0 != nil && err1 != nil:
		t.Fatal(err0, err1)
	case err0 != nil:
		return m1
	case err1 != nil || m0.txid > m1.txid:
		return m0
	}
	return m1
}

// reachablePages returns the pages the newest meta reaches, so that the
// corruptions below touch live pages, not freed ones.
func reachablePages(t *testing.T, b []byte, ps int) map[uint64]bool {
	t.Helper()
	m := newestMeta(t, b, ps)
	w := &walker{r: bytes.NewReader(b), ps: int64(ps), hwm: m.pgid, seen: map[uint64]bool{}}
	if err := w.tree(m.root, 0, nil, nil); err != nil {
		t.Fatal(err)
	}
	return w.seen
}

func livePage(t *testing.T, b []byte, ps int, flags uint16) int {
	t.Helper()
	live := reachablePages(t, b, ps)
	for _, id := range pagesOf(b, ps, flags) {
		if live[uint64(id)] {
			return id
		}
	}
	t.Fatalf("no live page with flags %#x", flags)
	return 0
}

func TestCheckFileAcceptsStores(t *testing.T) {
	for _, n := range []int{0, 1, 50, 600} {
		path := filepath.Join(t.TempDir(), FileName)
		b := writeStore(t, path, n)
		if err := checkFile(bytes.NewReader(b), int64(len(b))); err != nil {
			t.Errorf("%d instances: a sound file fails the check: %v", n, err)
		}
	}
}

func TestCheckFileFindsDamage(t *testing.T) {
	ps := os.Getpagesize()
	path := filepath.Join(t.TempDir(), FileName)
	sound := writeStore(t, path, 600) // branch pages, overflow pages
	// The store writes no freelist (NoFreelistSync); a file an older build
	// wrote has one, and it is checked too.
	flPath := filepath.Join(t.TempDir(), FileName)
	writeStore(t, flPath, 600)
	writeRawBolt(t, flPath, func(tx *bolt.Tx) error {
		return tx.Bucket(bucketPool).Delete([]byte("https://searx-0001.example.org/"))
	})
	withFreelist, err := os.ReadFile(flPath)
	if err != nil {
		t.Fatal(err)
	}
	if newestMeta(t, withFreelist, ps).freelist == noFreelist {
		t.Fatal("bbolt wrote no freelist")
	}
	cases := []struct {
		name    string
		corrupt func(t *testing.T, b []byte)
		want    string
	}{
		{"branch points past the end", func(t *testing.T, b []byte) {
			p := b[livePage(t, b, ps, flagBranch)*ps:]
			ne.PutUint64(p[pageHeaderSize+8:], newestMeta(t, b, ps).pgid+5)
		}, "outside"},
		{"branch points to page 1 (a meta page)", func(t *testing.T, b []byte) {
			p := b[livePage(t, b, ps, flagBranch)*ps:]
			ne.PutUint64(p[pageHeaderSize+8:], 1)
		}, "outside"},
		{"branch points twice to one page (a cycle)", func(t *testing.T, b []byte) {
			id := livePage(t, b, ps, flagBranch)
			p := b[id*ps:]
			ne.PutUint64(p[pageHeaderSize+elemSize+8:], ne.Uint64(p[pageHeaderSize+8:]))
		}, "referenced twice"},
		{"branch points to itself", func(t *testing.T, b []byte) {
			id := livePage(t, b, ps, flagBranch)
			ne.PutUint64(b[id*ps+pageHeaderSize+8:], uint64(id))
		}, "referenced twice"},
		{"leaf key past the page", func(t *testing.T, b []byte) {
			p := b[livePage(t, b, ps, flagLeaf)*ps:]
			ne.PutUint32(p[pageHeaderSize+8:], 1<<30) // ksize
		}, "past its end"},
		{"leaf with more elements than fit", func(t *testing.T, b []byte) {
			p := b[livePage(t, b, ps, flagLeaf)*ps:]
			ne.PutUint16(p[10:], 0xFFFF)
		}, "more elements"},
		{"overflow past the end", func(t *testing.T, b []byte) {
			p := b[livePage(t, b, ps, flagLeaf)*ps:]
			ne.PutUint32(p[12:], 1<<31)
		}, "overflows"},
		{"page of an unknown type", func(t *testing.T, b []byte) {
			p := b[livePage(t, b, ps, flagLeaf)*ps:]
			ne.PutUint16(p[8:], 0x40)
		}, "not a branch or a leaf"},
		{"freelist longer than its page", func(t *testing.T, b []byte) {
			p := b[newestMeta(t, b, ps).freelist*uint64(ps):]
			ne.PutUint16(p[10:], 0xFFFF)
			ne.PutUint64(p[pageHeaderSize:], 1<<40)
		}, "more than it holds"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := bytes.Clone(sound)
			if strings.HasPrefix(c.name, "freelist") {
				b = bytes.Clone(withFreelist)
			}
			c.corrupt(t, b)
			err := checkFile(bytes.NewReader(b), int64(len(b)))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("checkFile = %v, want an error with %q", err, c.want)
			}
			// And Open moves it aside instead of crashing.
			p := filepath.Join(t.TempDir(), FileName)
			writeFile(t, p, b)
			s := openT(t, p, Options{})
			if s.Recovered() == "" {
				t.Fatal("Open kept a damaged file")
			}
		})
	}
}

// smallFile is a store file with 1 KiB pages and a little of every
// bucket, a few kilobytes: a seed the fuzzer can mutate and minimize.
func smallFile(f testing.TB, n int) []byte {
	path := filepath.Join(f.TempDir(), FileName)
	db, err := bolt.Open(path, 0o600, &bolt.Options{PageSize: 1024})
	if err != nil {
		f.Fatal(err)
	}
	db.Close()
	s, err := Open(path, Options{Logger: discard(), Clock: fixedClock()})
	if err != nil {
		f.Fatal(err)
	}
	for i := range n {
		u := fmt.Sprintf("https://s%d.example/", i)
		err := s.WriteBatch(Batch{
			Pool:       map[string][]byte{u: fmt.Appendf(nil, `{"latency_ewma_ms":%d}`, 300+i)},
			PoolDelete: []string{fmt.Sprintf("https://s%d.example/", i-2)},
			Caps:       map[string][]byte{u: []byte(`{"json":true}`)},
			Cache:      []CacheEntry{{Key: u, Value: []byte("answer"), StoredAt: t0, Expires: t0.Add(time.Hour)}},
		})
		if err != nil {
			f.Fatal(err)
		}
	}
	if err := s.PutOperator(Operator{URL: "https://own/", Added: true, UpdatedAt: t0}); err != nil {
		f.Fatal(err)
	}
	if err := s.SaveDirectory(Directory{Raw: []byte(`{"instances":{}}`), FetchedAt: t0}); err != nil {
		f.Fatal(err)
	}
	s.Close()
	b, err := os.ReadFile(path)
	if err != nil {
		f.Fatal(err)
	}
	// bbolt grows files in steps; the pages past the high-water mark are
	// not part of the database.
	m0, err := parseMeta(b)
	if err != nil {
		f.Fatal(err)
	}
	ps := uint64(m0.pageSize)
	m1, err := parseMeta(b[ps:])
	if err != nil {
		f.Fatal(err)
	}
	b = b[:max(m0.pgid, m1.pgid)*ps]
	if err := checkFile(bytes.NewReader(b), int64(len(b))); err != nil {
		f.Fatalf("the seed fails the check: %v", err)
	}
	f.Logf("seed of %d bytes", len(b))
	return b
}

// The fuzz seeds are sound: Open keeps them as they are.
func TestSmallFileOpens(t *testing.T) {
	path := filepath.Join(t.TempDir(), FileName)
	writeFile(t, path, smallFile(t, 12))
	s := openT(t, path, Options{})
	if s.Recovered() != "" {
		t.Fatal("a sound file with 1 KiB pages was moved aside")
	}
	p, err := s.LoadPool()
	if err != nil || len(p) != 2 || len(p["https://s11.example/"]) == 0 {
		t.Fatalf("LoadPool = %s, %v", dump(p), err)
	}
}

func FuzzCheckFile(f *testing.F) {
	f.Add(smallFile(f, 2))
	f.Add(smallFile(f, 12))
	f.Add([]byte("not a database"))
	f.Fuzz(func(t *testing.T, b []byte) {
		_ = checkFile(bytes.NewReader(b), int64(len(b))) // must not panic or hang
	})
}

// Whatever the file holds, Open gives a working store: the file as it
// was, or a fresh one with the old moved aside.
func FuzzOpen(f *testing.F) {
	f.Add(smallFile(f, 2))
	f.Add(smallFile(f, 12))
	f.Add([]byte{})
	f.Add([]byte("not a database"))
	f.Fuzz(func(t *testing.T, b []byte) {
		path := filepath.Join(t.TempDir(), FileName)
		writeFile(t, path, b)
		s, err := Open(path, Options{Logger: discard(), Clock: fixedClock()})
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		defer s.Close()
		if _, err := s.LoadPool(); err != nil && s.Recovered() != "" {
			t.Fatalf("a fresh store fails to read: %v", err)
		}
		if err := s.WriteBatch(Batch{Pool: map[string][]byte{"https://fuzz/": []byte("1")}}); err != nil {
			t.Fatalf("WriteBatch: %v", err)
		}
		p, err := s.LoadPool()
		if err != nil || string(p["https://fuzz/"]) != "1" {
			t.Fatalf("LoadPool after a write = %v", err)
		}
	})
}
