package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/searxgate/searxgate/mcp"
	"github.com/searxgate/searxgate/reader/pdf/pdftest"
	"github.com/searxgate/searxgate/sim"
)

// pdfHosts serves body as a PDF (its length announced) on n loopback
// addresses of their own (127.0.0.first…): n servers for the reader's
// politeness, which counts each address as one. It returns their base
// URLs.
func pdfHosts(t *testing.T, first, n int, body []byte) []string {
	t.Helper()
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/pdf")
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		_, _ = w.Write(body)
	})
	var urls []string
	for i := range n {
		ln, err := net.Listen("tcp", fmt.Sprintf("127.0.0.%d:0", first+i))
		if err != nil {
			t.Skipf("cannot listen on another loopback address: %v", err)
		}
		srv := &http.Server{Handler: h}
		go func() { _ = srv.Serve(ln) }()
		t.Cleanup(func() { _ = srv.Close() })
		urls = append(urls, "http://"+ln.Addr().String())
	}
	return urls
}

// mcpFrom connects to p's /mcp from the loopback address from, which is
// the client searxgate counts it as.
func mcpFrom(t *testing.T, p *proc, from string) *sdk.ClientSession {
	s, _ := mcpConns(t, p, from)
	return s
}

// mcpConns is mcpFrom, and a function that closes every connection the
// client opened, as a client that goes away does.
func mcpConns(t *testing.T, p *proc, from string) (*sdk.ClientSession, func()) {
	t.Helper()
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(from)}}
	var mu sync.Mutex
	var conns []net.Conn
	dial := func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := d.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
		return c, err
	}
	drop := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			_ = c.Close()
		}
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: dial, MaxIdleConnsPerHost: 64}}
	return mcpSession(t, p.url+"/mcp", hc), drop
}

// childrenOf are the processes whose parent is pid (the PDF workers).
func childrenOf(pid int) []int {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	var out []int
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// pid (comm) state ppid …: comm may hold spaces, not ')'.
		_, rest, ok := strings.Cut(string(b), ") ")
		fields := strings.Fields(rest)
		if !ok || len(fields) < 2 {
			continue
		}
		if ppid, _ := strconv.Atoi(fields[1]); ppid == pid {
			child, _ := strconv.Atoi(filepath.Base(filepath.Dir(f)))
			out = append(out, child)
		}
	}
	return out
}

// TestPDFFloodProcess: the shipped binary, client A (one address) asks
// for 30 PDFs that each cost a worker seconds, at once, with no client
// limit; client B's small PDF, asked once A's are queued, is answered
// within 10 s (B takes the first worker that frees, not a place behind
// A's 28). Then A goes (its calls cancelled, its connections closed): its
// reads leave the queue and its children are killed within seconds, not
// run for nobody.
func TestPDFFloodProcess(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc here to see the workers")
	}
	slow := pdfHosts(t, 11, 30, pdftest.Slow())
	small := pdfHosts(t, 45, 1, pdftest.Paper().Bytes())[0]
	_, dir := startFleet(t, 34, []sim.InstanceConfig{{ID: "flood-good", Behaviour: sim.Fast, Latency: -1, JSON: true}})
	p := startProc(t, "serve", "--listen", "127.0.0.1:0", "--allow-private", "--reader-allow-private", "--data", t.TempDir(),
		"--directory", dir, "--contact", "ops@example.org", "--client-rate", "0")
	a, dropA := mcpConns(t, p, "127.0.0.2")
	b := mcpFrom(t, p, "127.0.0.3")

	ctxA, goneA := context.WithCancel(context.Background())
	defer goneA()
	var wg sync.WaitGroup
	for i, u := range slow {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, _ = a.CallTool(ctxA, &sdk.CallToolParams{Name: mcp.ToolRead, Arguments: map[string]any{"url": u + "/slow.pdf?n=" + strconv.Itoa(i)}})
		}()
	}
	// A's reads come in and take both workers (a generous wait: the
	// machine may be loaded).
	deadline := time.Now().Add(20 * time.Second)
	for len(childrenOf(p.cmd.Process.Pid)) < 2 {
		if time.Now().After(deadline) {
			t.Fatal("A's reads never took the workers")
		}
		time.Sleep(50 * time.Millisecond)
	}
	time.Sleep(time.Second) // the rest of A's 30 reach the queue

	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	start := time.Now()
	res, err := b.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolRead, Arguments: map[string]any{"url": small + "/paper.pdf"}})
	took := time.Since(start)
	if err != nil || res.IsError {
		t.Fatalf("B's PDF: %v %s", err, resultText(res))
	}
	if took > 10*time.Second {
		t.Errorf("B's PDF took %s behind A's flood, want within 10 s", took)
	}
	t.Logf("B's small PDF answered in %s while A's 30 slow PDFs were queued", took.Round(10*time.Millisecond))

	dropA() // A goes: its connections close
	goneA()
	wg.Wait()
	deadline = time.Now().Add(5 * time.Second)
	for {
		kids := childrenOf(p.cmd.Process.Pid)
		if len(kids) == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("A has gone, yet %d PDF workers still run for it 5 s later", len(kids))
		}
		time.Sleep(50 * time.Millisecond)
	}
	if a, err := p.search("after the flood"); err != nil || a.status != 200 {
		t.Errorf("a search after the flood: %v %d", err, a.status)
	}
}

// rssTree is the resident memory of pid and its children, in bytes.
func rssTree(t *testing.T, pid int) int64 {
	total := rssOf(t, pid)
	for _, c := range childrenOf(pid) {
		total += rssOfGone(c)
	}
	return total
}

// rssOfGone is rssOf for a process that may have ended since: 0 then.
func rssOfGone(pid int) int64 {
	status, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return 0
	}
	m := vmRSS.FindSubmatch(status)
	if m == nil {
		return 0
	}
	kb, _ := strconv.ParseInt(string(m[1]), 10, 64)
	return kb << 10
}

// TestPDFMemoryProcess: four clients (four addresses) each ask for 30
// PDFs of 4.9 MiB at once, 120 reads; the shipped binary and its PDF
// workers together stay under 400 MB resident (VmRSS of the process and
// of each child, read from /proc every 20 ms for the whole run, the
// highest sum kept), far below the unit's MemoryMax=512M. The reads past
// the memory bound for PDFs being read are refused at once, each as a
// tool error that names the bound and says when to retry.
func TestPDFMemoryProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/status"); err != nil {
		t.Skip("no /proc here to read the memory")
	}
	hosts := pdfHosts(t, 11, 30, pdftest.Large(49<<20/10))
	_, dir := startFleet(t, 35, []sim.InstanceConfig{{ID: "mem-good", Behaviour: sim.Fast, Latency: -1, JSON: true}})
	p := startProc(t, "serve", "--listen", "127.0.0.1:0", "--allow-private", "--reader-allow-private", "--data", t.TempDir(),
		"--directory", dir, "--contact", "ops@example.org", "--client-rate", "0")
	pid := p.cmd.Process.Pid

	stop := make(chan struct{})
	peak := make(chan int64, 1)
	go func() {
		var most int64
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				peak <- most
				return
			case <-tick.C:
				most = max(most, rssTree(t, pid))
			}
		}
	}()

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	var mu sync.Mutex
	outcomes := map[string]int{}
	var wg sync.WaitGroup
	for c := range 4 {
		s := mcpFrom(t, p, fmt.Sprintf("127.0.0.%d", 2+c))
		for i, h := range hosts {
			wg.Add(1)
			go func() {
				defer wg.Done()
				res, err := s.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolRead,
					Arguments: map[string]any{"url": fmt.Sprintf("%s/large.pdf?client=%d&n=%d", h, c, i)}})
				text := ""
				switch {
				case err != nil:
					text = "call failed: " + err.Error()
				case !res.IsError:
					text = "read"
				case strings.HasPrefix(resultText(res), "reader queue full: ") && strings.Contains(resultText(res), "; retry in "):
					text = "refused: queue full"
				default:
					text = "other: " + resultText(res)
				}
				mu.Lock()
				outcomes[text]++
				mu.Unlock()
			}()
		}
	}
	wg.Wait()
	close(stop)
	most := <-peak
	t.Logf("120 reads of 4.9 MiB PDFs from 4 clients: %v; peak RSS of searxgate and its workers %d MiB", outcomes, most>>20)
	if most >= 400<<20 {
		t.Errorf("searxgate and its workers reached %d MiB resident, want under 400 MB", most>>20)
	}
	if outcomes["read"] == 0 || outcomes["read"]+outcomes["refused: queue full"] != 120 {
		t.Errorf("outcomes %v: want some read, every other refused as queue full", outcomes)
	}
	select {
	case <-p.exited:
		t.Fatalf("searxgate exited: %v", p.state)
	default:
	}
}

// TestHostShareProcess: the shipped binary, client A keeps 4 reads of one
// web site in flight (each page takes the site 1 s); client B reads that
// site 6 times, one after another, and is answered at least 5 times, each
// within 5 s (before, B was refused "host busy" 4 times of 6 and waited
// 7 s for the others).
func TestHostShareProcess(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	mux := http.NewServeMux()
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(time.Second):
		case <-r.Context().Done():
			return
		}
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("a slow page"))
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		_, _ = w.Write([]byte("a quick page"))
	})
	ln, err := net.Listen("tcp", "127.0.0.60:0")
	if err != nil {
		t.Skipf("cannot listen on another loopback address: %v", err)
	}
	site := &http.Server{Handler: mux}
	go func() { _ = site.Serve(ln) }()
	t.Cleanup(func() { _ = site.Close() })
	base := "http://" + ln.Addr().String()

	_, dir := startFleet(t, 36, []sim.InstanceConfig{{ID: "host-good", Behaviour: sim.Fast, Latency: -1, JSON: true}})
	p := startProc(t, "serve", "--listen", "127.0.0.1:0", "--allow-private", "--reader-allow-private", "--data", t.TempDir(),
		"--directory", dir, "--contact", "ops@example.org", "--client-rate", "0")
	a, b := mcpFrom(t, p, "127.0.0.2"), mcpFrom(t, p, "127.0.0.3")

	ctxA, stopA := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	var n sync.Mutex
	next := 0
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctxA.Err() == nil {
				n.Lock()
				next++
				u := fmt.Sprintf("%s/slow?n=%d", base, next)
				n.Unlock()
				_, _ = a.CallTool(ctxA, &sdk.CallToolParams{Name: mcp.ToolRead, Arguments: map[string]any{"url": u}})
			}
		}()
	}
	defer func() { stopA(); wg.Wait() }()
	time.Sleep(3 * time.Second) // A's reads have used the site's burst and wait their turns

	ok := 0
	for i := range 6 {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		start := time.Now()
		res, err := b.CallTool(ctx, &sdk.CallToolParams{Name: mcp.ToolRead, Arguments: map[string]any{"url": fmt.Sprintf("%s/page?n=%d", base, i)}})
		took := time.Since(start)
		cancel()
		switch {
		case err != nil:
			t.Logf("B's read %d: %v", i, err)
		case res.IsError:
			t.Logf("B's read %d refused after %s: %s", i, took.Round(10*time.Millisecond), resultText(res))
		case took > 5*time.Second:
			t.Logf("B's read %d took %s", i, took.Round(10*time.Millisecond))
		default:
			ok++
			t.Logf("B's read %d answered in %s: %.80s", i, took.Round(10*time.Millisecond), resultText(res))
		}
	}
	if ok < 5 {
		t.Errorf("B read the site A keeps busy %d times of 6 within 5 s, want at least 5", ok)
	}
}
