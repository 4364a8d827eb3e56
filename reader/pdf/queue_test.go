package pdf

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// scriptWorker is a Worker whose child is a shell script: a body that
// starts with "slow" never ends (until killed); any other is answered at
// once with its own text. Each child writes its process id to a file in
// dir named by the body's second word.
func scriptWorker(t *testing.T) (*Worker, string) {
	t.Helper()
	if runtime.GOOS != "linux" {
		t.Skip("the script worker needs a Linux shell")
	}
	dir := t.TempDir()
	script := `IFS= read -r head; IFS= read -r body; set -- $body; echo $$ > "` + dir + `/$2"
case "$1" in slow) exec /bin/sleep 60;; esac
printf '{"Doc":{"Markdown":"read %s","Read":1,"Total":1}}\n' "$2"`
	return NewWorker(WorkerConfig{Command: []string{"/bin/sh", "-c", script}, Workers: 2}), dir
}

// pidOf waits for the child of read name to have written its id.
func pidOf(t *testing.T, dir, name string) int {
	t.Helper()
	end := time.Now().Add(time.Minute)
	for {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if pid, perr := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && perr == nil {
			return pid
		}
		if time.Now().After(end) {
			t.Fatalf("the child of %s never started", name)
		}
		time.Sleep(10 * time.Millisecond) // a watchdog's poll of a real child, not a pace
	}
}

func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }

// untilWaiting waits for client to have own reads waiting.
func untilWaiting(t *testing.T, w *Worker, client string, own int) {
	t.Helper()
	end := time.Now().Add(time.Minute)
	for n, _ := w.turns.Waiting(client); n != own; n, _ = w.turns.Waiting(client) {
		if time.Now().After(end) {
			t.Fatalf("%s has %d reads waiting, want %d", client, n, own)
		}
		runtime.Gosched()
	}
}

// TestWorkerFairAndCancelled: A holds both workers with reads that never
// end and queues 28 more; B's read, queued after them, takes the first
// worker that frees (A's first read, whose caller went away: its child
// is killed at once), not A's next. When A's callers all go, its queue
// empties and its children are gone.
func TestWorkerFairAndCancelled(t *testing.T) {
	w, dir := scriptWorker(t)
	lim := Limits{Pages: 1, Chars: 100, Time: time.Minute}
	type out struct {
		name string
		err  error
		doc  *Doc
	}
	done := make(chan out, 64)
	read := func(ctx context.Context, client, name, kind string) {
		doc, _, err := w.Read(ctx, client, []byte(kind+" "+name), lim)
		done <- out{name, err, doc}
	}
	var cancels []context.CancelFunc
	for i := range 30 {
		ctx, cancel := context.WithCancel(context.Background())
		cancels = append(cancels, cancel)
		name := "A" + strconv.Itoa(i)
		go read(ctx, "A", name, "slow")
		if i < 2 {
			pidOf(t, dir, name) // the two workers, in this order
		}
	}
	untilWaiting(t, w, "A", 28)
	go read(context.Background(), "B", "B0", "fast")
	untilWaiting(t, w, "B", 1)

	a0 := pidOf(t, dir, "A0")
	cancels[0]()
	if o := <-done; o.name != "A0" || !errors.Is(o.err, context.Canceled) {
		t.Fatalf("first to end: %s %v, want A0 cancelled", o.name, o.err)
	}
	if alive(a0) {
		t.Errorf("A0's child %d still runs after its caller went", a0)
	}
	if o := <-done; o.name != "B0" || o.err != nil || o.doc.Markdown != "read B0" {
		t.Fatalf("next to end: %s %v, want B0 read", o.name, o.err)
	}
	for _, c := range cancels[1:] {
		c()
	}
	for range 29 {
		if o := <-done; !errors.Is(o.err, context.Canceled) {
			t.Errorf("%s: %v, want cancelled", o.name, o.err)
		}
	}
	if own, all := w.turns.Waiting("A"); own != 0 || all != 0 {
		t.Errorf("after A's callers went: A %d waiting, all %d", own, all)
	}
	// Every child that was started is gone. One killed between its
	// shell opening its file and writing its id left the file empty: it
	// is gone too, and there is nothing to wait for.
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		b, _ := os.ReadFile(filepath.Join(dir, e.Name()))
		if pid, err := strconv.Atoi(strings.TrimSpace(string(b))); err == nil && alive(pid) {
			t.Errorf("%s's child %d still runs", e.Name(), pid)
		}
	}
}
