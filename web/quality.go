package web

import (
	"strconv"
	"strings"

	"github.com/searxgate/searxgate/pool"
)

// What the faces say of answer quality: the thin-answer header, and the
// status page's "Answers" column (proxy/quality.go has the words of one
// answer, pool/quality.go what is learned per instance).

// maxHeaderNote caps a header value made of upstream words.
const maxHeaderNote = 512

// headerSafe is s as a header value: printable ASCII only (anything else
// becomes "?"), at most maxHeaderNote bytes.
func headerSafe(s string) string {
	b := make([]byte, 0, min(len(s), maxHeaderNote))
	for _, r := range s {
		if len(b) >= maxHeaderNote {
			break
		}
		if r < 0x20 || r > 0x7e {
			r = '?'
		}
		b = append(b, byte(r))
	}
	return string(b)
}

// qualityCell is the status page's words for what an instance's answers
// hold: "full" or "thin (40 %)", the engines suspended there and those
// that answered.
type qualityCell struct {
	Fullness  string // "full", "thin (40 %)", or "–" when nothing was learned
	Thin      bool
	Suspended string // "google (Suspended: CAPTCHA), bing (...)"
	Answering string // "wikipedia, mojeek"
}

func qualityOf(st *pool.Stats) qualityCell {
	q := &st.Quality
	c := qualityCell{Fullness: "–", Thin: st.Thin}
	switch {
	case st.Thin:
		c.Fullness = "thin (" + strconv.FormatFloat(100*q.Fullness, 'f', 0, 64) + " %)"
	case q.Samples > 0:
		c.Fullness = "full"
	}
	sus := make([]string, 0, len(q.Suspended))
	for _, s := range q.Suspended {
		sus = append(sus, s.Engine+" ("+s.Reason+")")
	}
	c.Suspended = clean(strings.Join(sus, ", "), maxContent)
	ans := make([]string, 0, len(q.Answering))
	for _, e := range q.Answering {
		ans = append(ans, e.Engine)
	}
	c.Answering = clean(strings.Join(ans, ", "), maxContent)
	return c
}
