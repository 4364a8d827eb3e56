package main

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/searxgate/searxgate/reader/pdf"
	"github.com/searxgate/searxgate/sim"
)

// The tests in this file run the real searxgate binary, built once, as a
// process of its own: what kill -9, SIGTERM and a second process on the
// same data folder do can only be seen from outside.

var (
	binOnce sync.Once
	binDir  string // removed by TestMain
	binPath string
	binErr  error
)

// parallelWaits is how many of this package's parallel tests run at once
// unless -test.parallel says otherwise: they are the ones that mostly wait
// (on searxgate processes, sim latencies, deadlines, Redis), not compute,
// so more of them than there are cores overlap their waiting. Each keeps
// to its own ports, folders and processes, and none reads process-wide
// figures (CPU time, heap, signals to this process): those tests stay
// serial, and run before any parallel one starts.
const parallelWaits = 4

func TestMain(m *testing.M) {
	// The app tests run searxgate in this binary, whose PDF workers are
	// this binary too.
	pdf.ServeIfWorker()
	flag.Parse()
	if !flagGiven("test.parallel") {
		_ = flag.Set("test.parallel", strconv.Itoa(max(parallelWaits, runtime.GOMAXPROCS(0))))
	}
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	os.Exit(code)
}

// flagGiven reports whether the command line set the flag name.
func flagGiven(name string) bool {
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == name })
	return given
}

// searxgateBinary builds the binary from this package once per test run.
// Under -short it skips the test: process tests are left to the full run.
func searxgateBinary(t *testing.T) string {
	t.Helper()
	if testing.Short() {
		t.Skip("-short: skipping a test that builds and runs the searxgate binary")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skip("the go command is not on PATH: cannot build searxgate to run it as a process")
	}
	binOnce.Do(func() {
		binDir, binErr = os.MkdirTemp("", "searxgate-bin-")
		if binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "searxgate")
		cmd := exec.Command(goTool, "build", "-o", binPath, ".")
		out, err := cmd.CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// logBuffer collects a process's stderr; safe for the process's copier and
// the test to use at once.
type logBuffer struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (b *logBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *logBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// proc is one searxgate process.
type proc struct {
	cmd    *exec.Cmd
	url    string // http://127.0.0.1:PORT, once it serves
	stderr *logBuffer
	exited chan struct{} // closed when the process has exited
	state  *os.ProcessState
}

var servingRE = regexp.MustCompile(`msg="searxgate is serving" addr=(http://127\.0\.0\.1:[0-9]+)/`)

// launch starts searxgate with args; it does not wait for anything.
func launch(t *testing.T, args ...string) *proc {
	t.Helper()
	return launchEnv(t, processEnv(), args...)
}

// launchEnv is launch with exactly the environment env (NAME=value).
func launchEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	p := &proc{stderr: &logBuffer{}, exited: make(chan struct{})}
	p.cmd = exec.Command(searxgateBinary(t), args...)
	p.cmd.Stdout = io.Discard
	p.cmd.Stderr = p.stderr
	p.cmd.Env = env
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		p.state = p.cmd.ProcessState
		close(p.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-p.exited:
		default:
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
		if t.Failed() {
			t.Logf("searxgate's log (%v):\n%s", p.cmd.Args[1:], p.stderr.String())
		}
	})
	return p
}

// processEnv is the environment of a searxgate process: this one's, less
// every SEARXGATE_ setting, so that only the test's flags apply.
func processEnv() []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "SEARXGATE_") {
			env = append(env, kv)
		}
	}
	return env
}

// startProc starts searxgate and waits until it says it is serving.
func startProc(t *testing.T, args ...string) *proc {
	t.Helper()
	return waitServing(t, launch(t, args...))
}

// waitServing waits until the process p says it is serving.
func waitServing(t *testing.T, p *proc) *proc {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		if m := servingRE.FindStringSubmatch(p.stderr.String()); m != nil {
			p.url = m[1]
			return p
		}
		select {
		case <-p.exited:
			t.Fatalf("searxgate exited (%v) before serving:\n%s", p.state, p.stderr.String())
		case <-time.After(20 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatalf("searxgate did not say it was serving within 30s:\n%s", p.stderr.String())
		}
	}
}

// wait waits up to d for the process to exit and returns its exit code.
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.exited:
		return p.state.ExitCode()
	case <-time.After(d):
		t.Fatalf("searxgate still running %v later", d)
		return -1
	}
}

func (p *proc) signal(t *testing.T, sig os.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil {
		t.Fatal(err)
	}
}

var procClient = &http.Client{Timeout: 20 * time.Second, CheckRedirect: loopbackClient.CheckRedirect}

// search asks the process one JSON search; err is a transport error.
func (p *proc) search(q string) (answer, error) {
	return p.do(http.MethodGet, "/search?format=json&q="+strings.ReplaceAll(q, " ", "+"), "", nil)
}

func (p *proc) do(method, path, token string, body []byte) (answer, error) {
	req, err := http.NewRequest(method, p.url+path, bytes.NewReader(body))
	if err != nil {
		return answer{}, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := procClient.Do(req)
	if err != nil {
		return answer{}, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return answer{}, err
	}
	return answer{resp.StatusCode, resp.Header, b}, nil
}

// mustSearch is search, failing the test on anything but an on-topic 200.
func (p *proc) mustSearch(t *testing.T, q string) answer {
	t.Helper()
	a, err := p.search(q)
	if err != nil {
		t.Fatalf("search %q: %v", q, err)
	}
	if a.status != 200 || !onTopic(a.body, q) {
		t.Fatalf("search %q: %d %s", q, a.status, a.body)
	}
	return a
}

// refuserFleet is a fleet of an instance that answers one search and then
// refuses for an hour, and a good one; the refuser claims to be the fastest,
// so it is tried first and searxgate learns its refusal within a few
// searches. extra instances are added to the fleet but not to the directory.
func refuserFleet(t *testing.T, goodLatency time.Duration, extra ...sim.InstanceConfig) (*sim.Fleet, string) {
	t.Helper()
	instances := append([]sim.InstanceConfig{
		{ID: "refuser", Behaviour: sim.RateLimitSeconds, RateBurst: 1, RetryAfter: time.Hour, Latency: -1, JSON: true},
		{ID: "good", Behaviour: sim.Fast, Latency: goodLatency, JSON: true},
	}, extra...)
	fleet, _ := startFleet(t, 21, instances)
	dir := writeDirectory(t,
		dirEntry{fleet.Instance("refuser").URL(), 0.01},
		dirEntry{fleet.Instance("good").URL(), goodLatency.Seconds() + 0.2})
	return fleet, dir
}

// learnRefusal searches until the refuser has refused once.
func learnRefusal(t *testing.T, p *proc, fleet *sim.Fleet) {
	t.Helper()
	for i := range 8 {
		p.mustSearch(t, fmt.Sprintf("learn refusal %d", i))
		if fleet.Instance("refuser").Truth().Refusals > 0 {
			return
		}
	}
	t.Fatalf("the refusing instance never refused (%d searches): the test proves nothing",
		fleet.Instance("refuser").Truth().Searches)
}

// serveArgs are the flags every process here runs with.
func serveArgs(dir, data string, more ...string) []string {
	return append([]string{"serve", "--listen", "127.0.0.1:0", "--allow-private", "--directory", dir, "--data", data,
		"--client-rate", "0", "--log-level", "info"}, more...)
}

// waitFlushes waits until the store file has been written twice after t0:
// the second write's flush started after the first ended, so it holds all
// that was learned before t0.
func waitFlushes(t *testing.T, db string, t0 time.Time) {
	t.Helper()
	deadline := time.Now().Add(15 * time.Second)
	last := t0
	for n := 0; n < 2; {
		fi, err := os.Stat(db)
		if err == nil && fi.ModTime().After(last) {
			last = fi.ModTime()
			n++
			continue
		}
		if time.Now().After(deadline) {
			t.Fatalf("the store file was not written twice within 15s of %v (last write %v)", t0, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// load runs searches on p from workers until stopped, counting the 200s.
type load struct {
	stop chan struct{}
	wg   sync.WaitGroup
	ok   atomic.Int64
	sent atomic.Int64
}

func startLoad(p *proc, workers int, prefix string) *load {
	l := &load{stop: make(chan struct{})}
	for w := range workers {
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			for i := 0; ; i++ {
				select {
				case <-l.stop:
					return
				default:
				}
				l.sent.Add(1)
				if a, err := p.search(fmt.Sprintf("%s w%d n%d", prefix, w, i)); err == nil && a.status == 200 {
					l.ok.Add(1)
				}
			}
		}()
	}
	return l
}

func (l *load) end() {
	close(l.stop)
	l.wg.Wait()
}

// TestKill9UnderLoad: searxgate killed with SIGKILL while searches are in
// flight restarts on the same data folder with what it had learned by its
// last flush (the refusing instance's open circuit) and with every change
// the operator made through the instance API.
func TestKill9UnderLoad(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	fleet, dir := refuserFleet(t, 300*time.Millisecond,
		sim.InstanceConfig{ID: "added", Behaviour: sim.Fast, JSON: true})
	addedURL := fleet.Instance("added").URL()
	data := t.TempDir()
	const token = "kill-nine-token"
	args := serveArgs(dir, data, "--flush", "200ms", "--admin-token", token, "--deadline", "3s",
		"--budget-20s", "1000", "--budget-10m", "10000", "--max-in-flight", "16")
	p := startProc(t, args...)

	// The operator adds an instance of their own, if this build has the
	// instance API.
	added := false
	body, _ := json.Marshal(map[string]string{"url": addedURL})
	a, err := p.do(http.MethodPost, "/api/instances", token, body)
	switch {
	case err != nil:
		t.Fatal(err)
	case a.status == http.StatusCreated:
		added = true
		t.Logf("added %s through the instance API", addedURL)
	case a.status == http.StatusNotFound, a.status == http.StatusServiceUnavailable, a.status == http.StatusForbidden:
		t.Logf("the instance API's writes are not available in this build (%d %s): the operator part is not tested", a.status, a.body)
	default:
		t.Fatalf("adding an instance: %d %s", a.status, a.body)
	}

	learnRefusal(t, p, fleet)
	learned := time.Now()
	l := startLoad(p, 4, "under load")
	waitFlushes(t, filepath.Join(data, "searxgate.db"), learned)
	// Searches are in flight: the good instance takes 300 ms each.
	for l.ok.Load() == 0 {
		select {
		case <-p.exited:
			t.Fatal("searxgate exited under load")
		case <-time.After(20 * time.Millisecond):
		}
	}
	p.signal(t, syscall.SIGKILL)
	if code := p.wait(t, 10*time.Second); code != -1 {
		t.Fatalf("exit code %d after SIGKILL, want -1 (killed)", code)
	}
	l.end()
	t.Logf("%d searches sent under load, %d answered before the kill", l.sent.Load(), l.ok.Load())

	fleet.ResetTruth()
	p2 := startProc(t, args...)
	for i := range 4 {
		p2.mustSearch(t, fmt.Sprintf("after the kill %d", i))
	}
	if n := fleet.Instance("refuser").Truth().Searches; n != 0 {
		t.Errorf("after kill -9 and a restart the refusing instance got %d searches inside its hour-long Retry-After", n)
	}
	if added {
		a, err := p2.do(http.MethodGet, "/api/instances", "", nil)
		if err != nil {
			t.Fatal(err)
		}
		if a.status != 200 || !bytes.Contains(a.body, []byte(addedURL)) {
			t.Errorf("after kill -9 and a restart the instance the operator added (%s) is gone: %d %s", addedURL, a.status, a.body)
		}
	}
	p2.signal(t, syscall.SIGTERM)
	if code := p2.wait(t, 20*time.Second); code != 0 {
		t.Errorf("exit code %d after SIGTERM, want 0", code)
	}
}

// TestDamagedStoreIsMovedAside: a store file that is not a bbolt file is
// moved aside, the log says where, and searxgate starts with a fresh one.
func TestDamagedStoreIsMovedAside(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	fleet, _ := startFleet(t, 22, []sim.InstanceConfig{{ID: "good", Behaviour: sim.Fast, JSON: true}})
	dir := writeDirectory(t, dirEntry{fleet.Instance("good").URL(), 0.1})
	data := t.TempDir()
	db := filepath.Join(data, "searxgate.db")
	garbage := bytes.Repeat([]byte("this is not a bbolt file\x00\xff"), 4096)
	if err := os.WriteFile(db, garbage, 0o600); err != nil {
		t.Fatal(err)
	}
	p := startProc(t, serveArgs(dir, data)...)
	m := regexp.MustCompile(`moved_to="?([^"\s]+)`).FindStringSubmatch(p.stderr.String())
	if m == nil {
		t.Fatalf("the log does not say where the damaged file went:\n%s", p.stderr.String())
	}
	moved := m[1]
	if filepath.Dir(moved) != data {
		t.Errorf("the damaged file was moved to %s, outside the data folder %s", moved, data)
	}
	if b, err := os.ReadFile(moved); err != nil || !bytes.Equal(b, garbage) {
		t.Errorf("the damaged file is not at %s as it was (err %v)", moved, err)
	}
	p.mustSearch(t, "fresh start")
	p.signal(t, syscall.SIGTERM)
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	if b, err := os.ReadFile(db); err != nil || bytes.Equal(b, garbage) {
		t.Fatalf("no fresh store file at %s (err %v)", db, err)
	}
	// The fresh file is a good one: a second start does not move it.
	p2 := startProc(t, serveArgs(dir, data)...)
	if strings.Contains(p2.stderr.String(), "moved_to") {
		t.Errorf("the fresh store was found damaged at the next start:\n%s", p2.stderr.String())
	}
}

// TestSIGTERMUnderLoad: on SIGTERM the searches in flight (to an instance
// that takes a second) finish with 200, the process exits 0, and what it
// learned was written on the way out: the periodic flush is an hour away,
// so only the final one can have saved it.
func TestSIGTERMUnderLoad(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	fleet, dir := refuserFleet(t, time.Second)
	data := t.TempDir()
	args := serveArgs(dir, data, "--flush", "1h", "--deadline", "4s", "--max-in-flight", "8", "--shutdown-grace", "10s")
	p := startProc(t, args...)
	learnRefusal(t, p, fleet)

	slow := fleet.Instance("good")
	base := slow.Truth().Searches
	const inFlight = 4
	type result struct {
		a   answer
		err error
		q   string
	}
	results := make(chan result, inFlight)
	for i := range inFlight {
		q := fmt.Sprintf("in flight %d", i)
		go func() {
			a, err := p.search(q)
			results <- result{a, err, q}
		}()
	}
	deadline := time.Now().Add(10 * time.Second)
	for slow.Truth().Searches < base+inFlight {
		if time.Now().After(deadline) {
			t.Fatalf("the searches did not reach the instance (%d of %d)", slow.Truth().Searches-base, inFlight)
		}
		time.Sleep(10 * time.Millisecond)
	}
	sent := time.Now()
	p.signal(t, syscall.SIGTERM)
	for range inFlight {
		r := <-results
		switch {
		case r.err != nil:
			t.Errorf("search %q in flight at SIGTERM: %v", r.q, r.err)
		case r.a.status != 200 || !onTopic(r.a.body, r.q):
			t.Errorf("search %q in flight at SIGTERM: %d %s", r.q, r.a.status, r.a.body)
		}
	}
	if code := p.wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM, want 0", code)
	}
	t.Logf("stopped %v after SIGTERM", time.Since(sent).Round(time.Millisecond))
	if !strings.Contains(p.stderr.String(), `msg=stopped`) {
		t.Errorf("the log does not say searxgate stopped cleanly")
	}

	fleet.ResetTruth()
	p2 := startProc(t, args...)
	for i := range 3 {
		p2.mustSearch(t, fmt.Sprintf("after SIGTERM %d", i))
	}
	if n := fleet.Instance("refuser").Truth().Searches; n != 0 {
		t.Errorf("after SIGTERM and a restart the refusing instance got %d searches: the final flush lost what was learned", n)
	}
}

// TestSecondProcessOnSameData: a second searxgate on a data folder in use
// fails at once and says the store is locked, naming the file.
func TestSecondProcessOnSameData(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	fleet, _ := startFleet(t, 23, []sim.InstanceConfig{{ID: "good", Behaviour: sim.Fast, JSON: true}})
	dir := writeDirectory(t, dirEntry{fleet.Instance("good").URL(), 0.1})
	data := t.TempDir()
	first := startProc(t, serveArgs(dir, data)...)

	start := time.Now()
	second := launch(t, serveArgs(dir, data)...)
	code := second.wait(t, 15*time.Second)
	took := time.Since(start)
	if code == 0 {
		t.Fatalf("the second process exited 0:\n%s", second.stderr.String())
	}
	log := second.stderr.String()
	if !strings.Contains(log, "locked") || !strings.Contains(log, filepath.Join(data, "searxgate.db")) {
		t.Errorf("the second process's message does not name the lock and the file:\n%s", log)
	}
	if servingRE.MatchString(log) {
		t.Errorf("the second process served before failing:\n%s", log)
	}
	// At once: the store's lock timeout (1 s) and a process start, with
	// room for a loaded machine.
	if took > 10*time.Second {
		t.Errorf("the second process took %v to fail", took)
	}
	t.Logf("the second process failed in %v with exit code %d", took.Round(time.Millisecond), code)

	// The first one is unharmed.
	first.mustSearch(t, "still serving")
	first.signal(t, syscall.SIGTERM)
	if code := first.wait(t, 20*time.Second); code != 0 {
		t.Errorf("the first process exited %d after SIGTERM, want 0", code)
	}
}
