package main

import (
	"strings"
	"testing"
)

// TestReport: a passing package prints its result line only; a failing
// test prints its output; a skipped test and a test that logged a
// "SKIP: reason" line each give one skip line with the reason.
func TestReport(t *testing.T) {
	stream := strings.Join([]string{
		`{"Action":"start","Package":"a"}`,
		`{"Action":"run","Package":"a","Test":"TestOK"}`,
		`{"Action":"output","Package":"a","Test":"TestOK","Output":"=== RUN   TestOK\n"}`,
		`{"Action":"output","Package":"a","Test":"TestOK","Output":"    a_test.go:9: chatter\n"}`,
		`{"Action":"output","Package":"a","Test":"TestOK","Output":"    a_test.go:10: SKIP: axe-core is not installed\n"}`,
		`{"Action":"pass","Package":"a","Test":"TestOK"}`,
		`{"Action":"run","Package":"a","Test":"TestTool"}`,
		`{"Action":"output","Package":"a","Test":"TestTool","Output":"=== RUN   TestTool\n"}`,
		`{"Action":"output","Package":"a","Test":"TestTool","Output":"    a_test.go:20: no redis-server (apt-get install redis-server)\n"}`,
		`{"Action":"output","Package":"a","Test":"TestTool","Output":"--- SKIP: TestTool (0.00s)\n"}`,
		`{"Action":"skip","Package":"a","Test":"TestTool"}`,
		`{"Action":"output","Package":"a","Output":"PASS\n"}`,
		`{"Action":"output","Package":"a","Output":"ok  \ta\t0.01s\n"}`,
		`{"Action":"pass","Package":"a"}`,
		`{"Action":"run","Package":"b","Test":"TestBad"}`,
		`{"Action":"output","Package":"b","Test":"TestBad","Output":"    b_test.go:5: want 2, got 3\n"}`,
		`{"Action":"output","Package":"b","Test":"TestBad","Output":"--- FAIL: TestBad (0.00s)\n"}`,
		`{"Action":"fail","Package":"b","Test":"TestBad"}`,
		`{"Action":"output","Package":"b","Output":"FAIL\tb\t0.02s\n"}`,
		`# b [b.test]`,
	}, "\n")
	var out strings.Builder
	skips := report(strings.NewReader(stream), &out)
	wantOut := "ok  \ta\t0.01s\n    b_test.go:5: want 2, got 3\n--- FAIL: TestBad (0.00s)\nFAIL\tb\t0.02s\n# b [b.test]\n"
	if out.String() != wantOut {
		t.Errorf("output:\n%q\nwant\n%q", out.String(), wantOut)
	}
	wantSkips := []string{
		"SKIP: a TestOK: axe-core is not installed",
		"SKIP: a TestTool: no redis-server (apt-get install redis-server)",
	}
	if strings.Join(skips, "\n") != strings.Join(wantSkips, "\n") {
		t.Errorf("skips:\n%s\nwant\n%s", strings.Join(skips, "\n"), strings.Join(wantSkips, "\n"))
	}
}
