package store

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"os"
)

// The structural check below reads bbolt's on-disk format (go.etcd.io/bbolt,
// internal/common: page.go, meta.go, bucket.go) through bounds-checked reads,
// so that a damaged file is recognised before bbolt dereferences a page
// pointer into its memory map, where a page beyond the end of the file is a
// fault, not an error. It checks only what keeps those reads safe; bbolt's
// own tx.Check, which runs afterwards, checks the rest (key order,
// unreachable pages, freed pages still in use).

const (
	boltMagic        = 0xED0CDAED
	boltVersion      = 2
	pageHeaderSize   = 16 // id uint64, flags uint16, count uint16, overflow uint32
	metaSize         = 64 // magic, version, pageSize, flags uint32; root, sequence, freelist, pgid, txid, checksum uint64
	metaSumSize      = 56 // the checksum covers the meta up to itself
	elemSize         = 16 // branch: pos, ksize uint32, pgid uint64; leaf: flags, pos, ksize, vsize uint32
	bucketHeaderSize = 16 // root pgid uint64, sequence uint64
	flagBranch       = 0x01
	flagLeaf         = 0x02
	flagFreelist     = 0x10
	leafFlagBucket   = 0x01
	noFreelist       = ^uint64(0)
	minPageSize      = 1024     // bbolt looks for pages of 1 KiB ...
	maxPageSize      = 16 << 20 // ... to 16 MiB
	maxDepth         = 64       // far deeper than any real tree of buckets and pages
)

// bbolt writes its structures in the machine's byte order.
var ne = binary.NativeEndian

var errStructure = errors.New("structure")

type boltMeta struct {
	pageSize uint32
	root     uint64
	freelist uint64
	pgid     uint64
	txid     uint64
}

// parseMeta reads the meta in the page that starts at b.
func parseMeta(b []byte) (boltMeta, error) {
	if len(b) < pageHeaderSize+metaSize {
		return boltMeta{}, fmt.Errorf("%w: short meta page", errStructure)
	}
	m := b[pageHeaderSize : pageHeaderSize+metaSize]
	if ne.Uint32(m[0:]) != boltMagic {
		return boltMeta{}, fmt.Errorf("%w: not a bbolt file (bad magic)", errStructure)
	}
	if v := ne.Uint32(m[4:]); v != boltVersion {
		return boltMeta{}, fmt.Errorf("%w: bbolt format version %d, want %d", errStructure, v, boltVersion)
	}
	h := fnv.New64a()
	_, _ = h.Write(m[:metaSumSize])
	if h.Sum64() != ne.Uint64(m[56:]) {
		return boltMeta{}, fmt.Errorf("%w: meta checksum mismatch", errStructure)
	}
	return boltMeta{
		pageSize: ne.Uint32(m[8:]),
		root:     ne.Uint64(m[16:]),
		freelist: ne.Uint64(m[32:]),
		pgid:     ne.Uint64(m[40:]),
		txid:     ne.Uint64(m[48:]),
	}, nil
}

// freelistSynced reports whether the newest meta page of the file at path
// points to a freelist: when it does not, bbolt rebuilt the freelist at
// open by walking every tree with the checks of its consistency check, so
// that check need not run again. In doubt it says yes.
func freelistSynced(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return true
	}
	defer f.Close()
	buf := make([]byte, pageHeaderSize+metaSize)
	read := func(off int64) (boltMeta, bool) {
		if _, err := f.ReadAt(buf, off); err != nil {
			return boltMeta{}, false
		}
		m, err := parseMeta(buf)
		return m, err == nil
	}
	m0, ok0 := read(0)
	if !ok0 {
		return true
	}
	m := m0
	if m1, ok1 := read(int64(m0.pageSize)); ok1 && m1.txid > m0.txid {
		m = m1
	}
	return m.freelist != noFreelist
}

// checkOpenFile checks the structure of an open file; an empty file is
// fine (bbolt initialises it). Damage comes back wrapped in ErrDamaged.
func checkOpenFile(f *os.File) error {
	fi, err := f.Stat()
	if err != nil {
		return err
	}
	if fi.Size() == 0 {
		return nil
	}
	if err := checkFile(f, fi.Size()); err != nil {
		return fmt.Errorf("%w: %v", ErrDamaged, err)
	}
	return nil
}

// checkFile checks the bbolt file r of the given size: a valid meta page
// (bbolt uses the valid one with the higher transaction id), a file as long
// as that meta's high-water mark, and trees and a freelist whose pages all
// lie inside it, are well formed and are referenced once.
func checkFile(r io.ReaderAt, size int64) error {
	var metas []boltMeta
	var firstErr error
	buf := make([]byte, pageHeaderSize+metaSize)
	read := func(off int64) {
		if off+int64(len(buf)) > size {
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: file of %d bytes is too short for a meta page at %d", errStructure, size, off)
			}
			return
		}
		if _, err := r.ReadAt(buf, off); err != nil {
			if firstErr == nil {
				firstErr = fmt.Errorf("%w: reading the meta page at %d: %v", errStructure, off, err)
			}
			return
		}
		m, err := parseMeta(buf)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			return
		}
		metas = append(metas, m)
	}
	read(0)
	var ps int64
	if len(metas) == 1 {
		ps = int64(metas[0].pageSize)
		if ps >= minPageSize && ps <= maxPageSize {
			read(ps)
		}
	} else {
		// Like bbolt: look for the second meta page at every page size it
		// supports, and take the first that describes itself.
		for try := int64(minPageSize); try <= maxPageSize && try < size-minPageSize; try <<= 1 {
			n := len(metas)
			read(try)
			if len(metas) > n && int64(metas[n].pageSize) == try {
				ps = try
				break
			}
			metas = metas[:n]
		}
	}
	if len(metas) == 0 {
		return firstErr
	}
	m := metas[0]
	for _, o := range metas[1:] {
		if o.txid > m.txid {
			m = o
		}
	}
	for _, o := range metas {
		if int64(o.pageSize) != ps {
			return fmt.Errorf("%w: meta pages disagree on the page size (%d, %d)", errStructure, o.pageSize, ps)
		}
	}
	if ps < minPageSize || ps > maxPageSize || ps&(ps-1) != 0 {
		return fmt.Errorf("%w: page size %d", errStructure, ps)
	}
	if m.pgid < 3 || m.pgid > uint64(size)/uint64(ps) {
		return fmt.Errorf("%w: file of %d bytes is shorter than its %d pages of %d bytes (truncated?)", errStructure, size, m.pgid, ps)
	}
	w := &walker{r: r, ps: ps, hwm: m.pgid, seen: make(map[uint64]bool)}
	if m.freelist != noFreelist {
		if err := w.freelist(m.freelist); err != nil {
			return err
		}
	}
	if m.root == 0 {
		return fmt.Errorf("%w: root bucket has no page", errStructure)
	}
	return w.tree(m.root, 0, nil, nil)
}

// walker reads pages [2, hwm) of a bbolt file, each at most once.
type walker struct {
	r    io.ReaderAt
	ps   int64
	hwm  uint64
	seen map[uint64]bool
}

// page reads page id with its overflow pages, after checking that they lie
// below the high-water mark and were not read before.
func (w *walker) page(id uint64) ([]byte, error) {
	if id < 2 || id >= w.hwm {
		return nil, fmt.Errorf("%w: page %d is outside [2, %d)", errStructure, id, w.hwm)
	}
	var hdr [pageHeaderSize]byte
	if _, err := w.r.ReadAt(hdr[:], int64(id)*w.ps); err != nil {
		return nil, fmt.Errorf("%w: reading page %d: %v", errStructure, id, err)
	}
	if got := ne.Uint64(hdr[0:]); got != id {
		return nil, fmt.Errorf("%w: page %d says it is page %d", errStructure, id, got)
	}
	overflow := uint64(ne.Uint32(hdr[12:]))
	if overflow >= w.hwm-id {
		return nil, fmt.Errorf("%w: page %d overflows %d pages past the end", errStructure, id, overflow)
	}
	for i := id; i <= id+overflow; i++ {
		if w.seen[i] {
			return nil, fmt.Errorf("%w: page %d is referenced twice", errStructure, i)
		}
		w.seen[i] = true
	}
	p := make([]byte, int64(overflow+1)*w.ps)
	if _, err := w.r.ReadAt(p, int64(id)*w.ps); err != nil {
		return nil, fmt.Errorf("%w: reading page %d: %v", errStructure, id, err)
	}
	return p, nil
}

func (w *walker) freelist(id uint64) error {
	p, err := w.page(id)
	if err != nil {
		return err
	}
	if flags := ne.Uint16(p[8:]); flags != flagFreelist {
		return fmt.Errorf("%w: freelist page %d has flags %#x", errStructure, id, flags)
	}
	n, start := uint64(ne.Uint16(p[10:])), uint64(pageHeaderSize)
	if n == 0xFFFF {
		n, start = ne.Uint64(p[pageHeaderSize:]), pageHeaderSize+8
	}
	if n > (uint64(len(p))-start)/8 {
		return fmt.Errorf("%w: freelist page %d lists %d pages, more than it holds", errStructure, id, n)
	}
	for i := range n {
		if f := ne.Uint64(p[start+8*i:]); f < 2 || f >= w.hwm {
			return fmt.Errorf("%w: freelist holds page %d, outside [2, %d)", errStructure, f, w.hwm)
		}
	}
	return nil
}

// keyOrder checks that the keys of one page are in strictly increasing
// order, at or above lo (the key its parent names it by) and below hi (the
// parent's next key), nil meaning no bound. bbolt checks the same when it
// rebuilds the freelist at open, but it panics on the first fault while its
// walk goes on in another goroutine: the store finds such faults first.
type keyOrder struct {
	id     uint64
	lo, hi []byte
	prev   []byte
	n      int
}

func (o *keyOrder) next(k []byte) error {
	switch {
	case o.n == 0 && o.lo != nil && bytes.Compare(k, o.lo) < 0:
		return fmt.Errorf("%w: the first key on page %d sorts before its parent's key", errStructure, o.id)
	case o.n > 0 && bytes.Compare(o.prev, k) >= 0:
		return fmt.Errorf("%w: keys on page %d are out of order", errStructure, o.id)
	case o.hi != nil && bytes.Compare(k, o.hi) >= 0:
		return fmt.Errorf("%w: a key on page %d sorts after its parent's next key", errStructure, o.id)
	}
	o.prev = k
	o.n++
	return nil
}

// tree checks the branch or leaf page id and everything below it; its keys
// lie in [lo, hi).
func (w *walker) tree(id uint64, depth int, lo, hi []byte) error {
	if depth > maxDepth {
		return fmt.Errorf("%w: pages nested deeper than %d at page %d", errStructure, maxDepth, id)
	}
	p, err := w.page(id)
	if err != nil {
		return err
	}
	flags, count := ne.Uint16(p[8:]), int(ne.Uint16(p[10:]))
	switch flags {
	case flagBranch:
		if count == 0 {
			return fmt.Errorf("%w: branch page %d is empty", errStructure, id)
		}
		if pageHeaderSize+count*elemSize > len(p) {
			return fmt.Errorf("%w: page %d has more elements than fit", errStructure, id)
		}
		key := func(i int) ([]byte, error) {
			e := pageHeaderSize + i*elemSize
			pos, ksize := uint64(ne.Uint32(p[e:])), uint64(ne.Uint32(p[e+4:]))
			if uint64(e)+pos+ksize > uint64(len(p)) {
				return nil, fmt.Errorf("%w: a key on page %d lies past its end", errStructure, id)
			}
			return p[uint64(e)+pos : uint64(e)+pos+ksize], nil
		}
		order := keyOrder{id: id, lo: lo, hi: hi}
		for i := range count {
			k, err := key(i)
			if err != nil {
				return err
			}
			if err := order.next(k); err != nil {
				return err
			}
			childHi := hi
			if i+1 < count {
				if childHi, err = key(i + 1); err != nil {
					return err
				}
			}
			if err := w.tree(ne.Uint64(p[pageHeaderSize+i*elemSize+8:]), depth+1, k, childHi); err != nil {
				return err
			}
		}
		return nil
	case flagLeaf:
		return w.leaf(p, id, depth, lo, hi)
	}
	return fmt.Errorf("%w: page %d has flags %#x, not a branch or a leaf", errStructure, id, flags)
}

// leaf checks the leaf page p (a page of the file, or an inline bucket's
// page inside a value) and the buckets it holds.
func (w *walker) leaf(p []byte, id uint64, depth int, lo, hi []byte) error {
	count := int(ne.Uint16(p[10:]))
	if pageHeaderSize+count*elemSize > len(p) {
		return fmt.Errorf("%w: page %d has more elements than fit", errStructure, id)
	}
	order := keyOrder{id: id, lo: lo, hi: hi}
	for i := range count {
		e := pageHeaderSize + i*elemSize
		flags := ne.Uint32(p[e:])
		pos, ksize, vsize := uint64(ne.Uint32(p[e+4:])), uint64(ne.Uint32(p[e+8:])), uint64(ne.Uint32(p[e+12:]))
		kstart := uint64(e) + pos
		if kstart+ksize+vsize > uint64(len(p)) {
			return fmt.Errorf("%w: a key or value on page %d lies past its end", errStructure, id)
		}
		if err := order.next(p[kstart : kstart+ksize]); err != nil {
			return err
		}
		if flags&leafFlagBucket == 0 {
			continue
		}
		v := p[kstart+ksize : kstart+ksize+vsize]
		if len(v) < bucketHeaderSize {
			return fmt.Errorf("%w: a bucket on page %d has a short header", errStructure, id)
		}
		if root := ne.Uint64(v); root != 0 {
			if err := w.tree(root, depth+1, nil, nil); err != nil {
				return err
			}
			continue
		}
		inline := v[bucketHeaderSize:]
		if len(inline) < pageHeaderSize {
			return fmt.Errorf("%w: an inline bucket on page %d is too short", errStructure, id)
		}
		if f := ne.Uint16(inline[8:]); f != flagLeaf {
			return fmt.Errorf("%w: an inline bucket on page %d has flags %#x", errStructure, id, f)
		}
		if depth+1 > maxDepth {
			return fmt.Errorf("%w: buckets nested deeper than %d on page %d", errStructure, maxDepth, id)
		}
		if err := w.leaf(inline, id, depth+1, nil, nil); err != nil {
			return err
		}
	}
	return nil
}
