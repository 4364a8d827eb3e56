package store

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
)

const (
	killChildPath  = "SEARXGATE_STORE_KILL_CHILD_PATH"
	killChildStart = "SEARXGATE_STORE_KILL_CHILD_START"
	hotKeys        = 40
)

// killBatch is batch i of the child: a key of its own in pool and caps, a
// cache entry, and every "hot" key rewritten with i, so that each batch
// touches many pages and a torn one would show.
func killBatch(i int) Batch {
	b := Batch{Pool: map[string][]byte{}, Caps: map[string][]byte{}}
	own := fmt.Sprintf("https://batch-%06d.example/", i)
	b.Pool[own] = stateJSON(own, i)
	b.Caps[own] = fmt.Appendf(nil, `{"batch":%d}`, i)
	for h := range hotKeys {
		u := fmt.Sprintf("https://hot-%02d.example/", h)
		b.Pool[u] = fmt.Appendf(stateJSON(u, i), "/%d", i)
	}
	b.Cache = []CacheEntry{{Key: fmt.Sprintf("q=%d", i), Value: stateJSON(own, i), StoredAt: t0.Add(time.Duration(i) * time.Second)}}
	return b
}

// TestKillChildWriter is the child of TestSIGKILLLeavesCommittedBatches:
// it writes numbered batches until it is killed, printing the number of
// each batch once WriteBatch has returned.
func TestKillChildWriter(t *testing.T) {
	path := os.Getenv(killChildPath)
	if path == "" {
		t.Skip("runs only as the child of TestSIGKILLLeavesCommittedBatches")
	}
	start, err := strconv.Atoi(os.Getenv(killChildStart))
	if err != nil {
		fmt.Println("error: start:", err)
		os.Exit(2)
	}
	// Should the parent die, stdin closes: stop rather than write forever.
	go func() {
		_, _ = io.Copy(io.Discard, os.Stdin)
		os.Exit(3)
	}()
	s, err := Open(path, Options{Logger: discard(), CacheMaxEntries: 1000})
	if err != nil {
		fmt.Println("error: open:", err)
		os.Exit(2)
	}
	for i := start; i < start+100000; i++ {
		if err := s.WriteBatch(killBatch(i)); err != nil {
			fmt.Println("error: batch:", err)
			os.Exit(2)
		}
		fmt.Println(i)
	}
	os.Exit(0)
}

// A process killed with SIGKILL while it writes leaves a file that opens,
// undamaged, with every batch it reported written but at most the last,
// and each batch whole or absent. Three rounds on the same file, each
// resuming where the last one's file ended.
func TestSIGKILLLeavesCommittedBatches(t *testing.T) {
	if runtime.GOOS == "windows" || runtime.GOOS == "plan9" {
		t.Skip("no SIGKILL")
	}
	if os.Getenv(killChildPath) != "" {
		t.Skip("this is the child")
	}
	path := testPath(t)
	next := 1
	for round, killAfter := range []int{5, 12, 20} {
		last := runKilledChild(t, path, next, next+killAfter, round == 0)
		h := checkAfterKill(t, path, last)
		t.Logf("round %d: child printed up to %d, file holds batches up to %d", round, last, h)
		next = h + 1
	}
}

// runKilledChild starts the child writing from batch start, SIGKILLs it
// once it has printed killAt, and returns the last number it printed.
func runKilledChild(t *testing.T, path string, start, killAt int, tryLock bool) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestKillChildWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), killChildPath+"="+path, killChildStart+"="+strconv.Itoa(start))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	defer stdin.Close()
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	killed := false
	defer func() {
		if !killed {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		}
	}()

	last := 0
	sc := bufio.NewScanner(stdout)
	read := func(line string) {
		if strings.HasPrefix(line, "error:") {
			t.Fatalf("child: %s (stderr: %s)", line, stderr.String())
		}
		if n, err := strconv.Atoi(line); err == nil {
			if n != max(last+1, start) {
				t.Fatalf("child printed %d after %d", n, last)
			}
			last = n
		}
	}
	for last < killAt && sc.Scan() {
		read(sc.Text())
		if tryLock && last == start {
			// The child holds the file: another process's Open must fail.
			if s, err := Open(path, Options{LockTimeout: 50 * time.Millisecond, Logger: discard()}); !errors.Is(err, ErrLocked) {
				if s != nil {
					s.Close()
				}
				t.Fatalf("Open while the child writes = %v, want ErrLocked", err)
			}
		}
	}
	if last < killAt {
		t.Fatalf("child stopped after %d (scan: %v, stderr: %s)", last, sc.Err(), stderr.String())
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Numbers already in the pipe were committed before the kill.
	for sc.Scan() {
		read(sc.Text())
	}
	killed = true
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != -1 {
		t.Fatalf("child ended with %v, not by the kill (stderr: %s)", err, stderr.String())
	}
	return last
}

// checkAfterKill opens the file and checks that it is undamaged, holds
// every batch up to at least last-1, nothing past last+1, and that each
// batch is whole: the hot keys all carry the newest batch present. It
// returns that batch.
func checkAfterKill(t *testing.T, path string, last int) int {
	t.Helper()
	s := openT(t, path, Options{CacheMaxEntries: 1000})
	defer s.Close()
	if s.Recovered() != "" {
		t.Fatalf("the killed writer's file was found damaged and moved to %s", s.Recovered())
	}
	pool, err := s.LoadPool()
	if err != nil {
		t.Fatal(err)
	}
	caps, err := s.LoadCaps()
	if err != nil {
		t.Fatal(err)
	}
	h := 0
	for i := 1; ; i++ {
		own := fmt.Sprintf("https://batch-%06d.example/", i)
		v, ok := pool[own]
		if !ok {
			break
		}
		if !bytes.Equal(v, stateJSON(own, i)) || string(caps[own]) != fmt.Sprintf(`{"batch":%d}`, i) {
			t.Fatalf("batch %d is not what was written", i)
		}
		if _, ok, err := s.CacheGet(fmt.Sprintf("q=%d", i)); !ok || err != nil {
			t.Fatalf("batch %d's cache entry: %v, %v", i, ok, err)
		}
		h = i
	}
	if h < last-1 || h > last+1 {
		t.Fatalf("file holds batches 1..%d; the child had printed %d", h, last)
	}
	if want := h + hotKeys; len(pool) != want {
		t.Fatalf("pool holds %d keys, want %d (batches past %d?)", len(pool), want, h)
	}
	for k := range hotKeys {
		u := fmt.Sprintf("https://hot-%02d.example/", k)
		if want := fmt.Appendf(stateJSON(u, h), "/%d", h); !bytes.Equal(pool[u], want) {
			t.Fatalf("hot key %s = %.40q..., want batch %d's: a batch was torn", u, pool[u], h)
		}
	}
	return h
}
