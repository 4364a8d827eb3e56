package proxy

import (
	"bytes"
	"compress/gzip"
	"errors"
	"testing"
)

func gz(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	_, _ = w.Write(b)
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestDecodeBody(t *testing.T) {
	plain := []byte(`{"query":"x"}`)
	got, err := decodeBody(nil, plain, 100)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("identity: %q, %v", got, err)
	}
	got, err = decodeBody([]byte("gzip"), gz(t, plain), 100)
	if err != nil || !bytes.Equal(got, plain) {
		t.Fatalf("gzip: %q, %v", got, err)
	}
	// A bomb: 8 MiB of zeros compresses to a few KiB; the cap stops it.
	bomb := gz(t, make([]byte, 8<<20))
	if len(bomb) > 64<<10 {
		t.Fatalf("bomb is %d bytes compressed", len(bomb))
	}
	if _, err := decodeBody([]byte("gzip"), bomb, 1<<20); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("bomb: %v, want ErrTooLarge", err)
	}
	// Exactly at the cap is fine.
	if got, err := decodeBody([]byte("gzip"), gz(t, make([]byte, 1000)), 1000); err != nil || len(got) != 1000 {
		t.Fatalf("at the cap: %d bytes, %v", len(got), err)
	}
	if _, err := decodeBody([]byte("gzip"), []byte("not gzip"), 100); !errors.Is(err, ErrTransport) {
		t.Fatalf("broken gzip: %v, want ErrTransport", err)
	}
	if _, err := decodeBody([]byte("br"), plain, 100); !errors.Is(err, ErrTransport) {
		t.Fatalf("unasked encoding: %v, want ErrTransport", err)
	}
}

func TestParseSuggestions(t *testing.T) {
	cases := map[string][]string{
		`["hel", ["hello", "help", " "]]`: {"hello", "help"},
		`["hello", "help"]`:               {"hello", "help"},
		`[]`:                              {},
		`["only"]`:                        {"only"},
	}
	for in, want := range cases {
		got, err := parseSuggestions([]byte(in))
		if err != nil || len(got) != len(want) {
			t.Fatalf("%s: %q, %v; want %q", in, got, err, want)
		}
		for i := range want {
			if got[i] != want[i] {
				t.Fatalf("%s: %q, want %q", in, got, want)
			}
		}
	}
	for _, bad := range []string{`{}`, `[1, 2, 3]`, `not json`} {
		if _, err := parseSuggestions([]byte(bad)); err == nil {
			t.Errorf("%s: no error", bad)
		}
	}
}
