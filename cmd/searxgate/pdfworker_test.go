package main

import (
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/mcp"
	"github.com/searxgate/searxgate/reader/pdf/pdftest"
	"github.com/searxgate/searxgate/sim"
)

// TestHostilePDFsProcess: the searxgate binary, as it is shipped, reads
// each hostile PDF (files under a kilobyte that ended the process when the
// PDF library ran in it: out of memory, out of stack) through MCP's
// web_url_read: each is refused with the reason, the process serves on,
// and its own memory stays far below what the files would have cost.
func TestHostilePDFsProcess(t *testing.T) {
	files := pdftest.Hostile()
	mux := http.NewServeMux()
	for name, body := range files {
		mux.HandleFunc("/"+strings.ReplaceAll(name, " ", "-")+".pdf", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/pdf")
			_, _ = w.Write(body)
		})
	}
	site := httptest.NewServer(mux)
	t.Cleanup(site.Close)
	_, dir := startFleet(t, 33, []sim.InstanceConfig{{ID: "pdf-good", Behaviour: sim.Fast, Latency: -1, JSON: true}})
	p := startProc(t, "serve", "--listen", "127.0.0.1:0", "--allow-private", "--reader-allow-private", "--data", t.TempDir(),
		"--directory", dir, "--contact", "ops@example.org")

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	s := mcpSession(t, p.url+"/mcp", nil)
	for name := range files {
		res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolRead,
			Arguments: map[string]any{"url": site.URL + "/" + strings.ReplaceAll(name, " ", "-") + ".pdf"}})
		if err != nil {
			t.Fatalf("%s: the call failed (has searxgate gone?): %v", name, err)
		}
		if text := resultText(res); !res.IsError || !strings.Contains(text, "is a PDF searxgate cannot read (") {
			t.Errorf("%s: error %v: %s", name, res.IsError, text)
		}
	}
	select {
	case <-p.exited:
		t.Fatalf("searxgate exited: %v", p.state)
	default:
	}
	if a, err := p.search("after the pdfs"); err != nil || a.status != 200 {
		t.Errorf("a search after the PDFs: %v %d", err, a.status)
	}
	if rss := rssOf(t, p.cmd.Process.Pid); rss > 160<<20 {
		t.Errorf("searxgate's RSS is %d MiB after the hostile PDFs", rss>>20)
	}
}

var vmRSS = regexp.MustCompile(`(?m)^VmRSS:\s+(\d+) kB$`)

// rssOf is the resident memory of process pid, in bytes.
func rssOf(t *testing.T, pid int) int64 {
	t.Helper()
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		t.Skipf("no /proc here to read the process's memory: %v", err)
	}
	m := vmRSS.FindSubmatch(status)
	if m == nil {
		t.Fatalf("no VmRSS in /proc/%d/status", pid)
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}
