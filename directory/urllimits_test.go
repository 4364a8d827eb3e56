package directory

import (
	"errors"
	"strings"
	"testing"
)

// TestNormalizePortAndLength: a port is 1 to 65535, written without
// leading zeros; a URL over MaxURLLength is refused before it reaches the
// store (whose keys cannot be that long) or a log line.
func TestNormalizePortAndLength(t *testing.T) {
	long := "https://example.org/" + strings.Repeat("a", MaxURLLength)
	tests := []struct {
		in, want string
		err      error
	}{
		{"https://example.org:1/", "https://example.org:1/", nil},
		{"https://example.org:65535/", "https://example.org:65535/", nil},
		{"https://example.org:08443/", "https://example.org:8443/", nil},
		{"https://example.org:0443/", "https://example.org/", nil},
		{"http://example.org:080/", "http://example.org/", nil},
		{"https://example.org:/", "https://example.org/", nil},
		{"https://example.org:0/", "", ErrBadURL},
		{"https://example.org:00/", "", ErrBadURL},
		{"https://example.org:65536/", "", ErrBadURL},
		{"https://example.org:99999/", "", ErrBadURL},
		{"https://example.org:99999999999999999999999/", "", ErrBadURL},
		{"https://[2001:db8::1]:0/", "", ErrBadURL},
		{long, "", ErrBadURL},
		{"https://example.org/" + strings.Repeat("a", MaxURLLength-len("https://example.org//")), "https://example.org/" + strings.Repeat("a", MaxURLLength-len("https://example.org//")) + "/", nil},
		// Escaping the path must not carry it past the cap.
		{"https://example.org/" + strings.Repeat("é", MaxURLLength/2-20), "", ErrBadURL},
	}
	for _, tt := range tests {
		got, err := Normalize(tt.in)
		if !errors.Is(err, tt.err) || got != tt.want {
			t.Errorf("Normalize(%.60q) = %.60q, %v; want %.60q, %v", tt.in, got, err, tt.want, tt.err)
		}
		if err == nil && len(got) > MaxURLLength {
			t.Errorf("Normalize(%.60q) is %d bytes, over MaxURLLength", tt.in, len(got))
		}
		if err != nil && len(err.Error()) > 300 {
			t.Errorf("Normalize(%.60q): a %d-byte error message echoes the URL", tt.in, len(err.Error()))
		}
	}
	if _, err := Normalize("https://alice:hunter2@example.org/"); err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("user info: %v; want ErrBadURL without the password", err)
	}
}
