package detect

import (
	"bytes"
	"reflect"
	"testing"
)

// TestSuspendedEngines2026: SearXNG 2026 lists a suspended engine as
// [engine, "Suspended: <reason>"] in JSON's unresponsive_engines and as a
// td.response-error row of the HTML page's engines table, among the rows
// of the engines that answered (td.response-time), which are not read as
// unresponsive. Every reason SearXNG suspends for reads the same way.
// (The capture's one answering engine found nothing.)
func TestSuspendedEngines2026(t *testing.T) {
	jsonBody := loadCapture(t, "searxng-2026/json-search-engine-suspended.txt").body
	htmlBody := loadCapture(t, "searxng-2026/html-search-engine-suspended.txt").body
	for _, reason := range []string{"Suspended: HTTP error", "Suspended: CAPTCHA", "Suspended: too many requests", "Suspended: access denied"} {
		want := [][2]string{{"fakeback", reason}}
		j := bytes.ReplaceAll(jsonBody, []byte("Suspended: HTTP error"), []byte(reason))
		r, err := ParseJSON(j)
		if err != nil || !reflect.DeepEqual(r.UnresponsiveEngines, want) {
			t.Errorf("JSON, %q: unresponsive %q (%v), want %q", reason, r.UnresponsiveEngines, err, want)
		}
		h := bytes.ReplaceAll(htmlBody, []byte("Suspended: HTTP error"), []byte(reason))
		r, err = ParseHTML(h)
		if err != nil || !reflect.DeepEqual(r.UnresponsiveEngines, want) {
			t.Errorf("HTML, %q: unresponsive %q (%v), want %q", reason, r.UnresponsiveEngines, err, want)
		}
	}
}
