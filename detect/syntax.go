package detect

import (
	"strconv"
	"strings"
	"time"
)

// TimeoutLimit returns the time a query's SearXNG timeout syntax asks its
// engines for, or 0 when it has none: a word "<" and digits, seconds below
// 100 ("<6" is 6 s), milliseconds from 100 on ("<850" is 850 ms), as
// searx/query.py reads it. When a query has several, the last one counts.
func TimeoutLimit(query string) time.Duration {
	if !strings.Contains(query, "<") {
		return 0 // every search asks: no allocation for the usual one
	}
	var limit time.Duration
	for _, w := range strings.Fields(query) {
		if len(w) < 2 || w[0] != '<' {
			continue
		}
		n, err := strconv.Atoi(w[1:])
		if err != nil || n < 0 || w[1] == '+' || w[1] == '-' {
			continue
		}
		if n < 100 {
			limit = time.Duration(n) * time.Second
		} else {
			limit = time.Duration(n) * time.Millisecond
		}
	}
	return limit
}
