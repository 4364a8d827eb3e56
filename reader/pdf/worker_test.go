package pdf

import (
	"context"
	"errors"
	"os"
	"runtime"
	"runtime/metrics"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/reader/pdf/pdftest"
)

// TestMain lets this test binary be its own PDF worker, as searxgate is.
func TestMain(m *testing.M) {
	ServeIfWorker()
	os.Exit(m.Run())
}

// testWorker is a Worker whose children are this test binary.
func testWorker(t testing.TB) *Worker {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Skipf("cannot find the test binary to start it as a worker: %v", err)
	}
	return NewWorker(WorkerConfig{Command: []string{exe}, Memory: 96 << 20})
}

// mapped is the memory this process's runtime has mapped.
func mapped() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestWorkerHostile: each hostile file, any one of which ends a process
// that reads it with the library, is refused through the worker with a
// reason, and this process goes on without having grown.
func TestWorkerHostile(t *testing.T) {
	w := testWorker(t)
	runtime.GC()
	before := mapped()
	want := map[string]string{
		"xref stream size escaped":  "larger than any real PDF's",
		"xref stream size 5e8":      "larger than any real PDF's",
		"xref stream index escaped": "larger than any real PDF's",
		"xref table with a comment": "larger than any real PDF's",
		"object stream in itself":   "its objects nest without end",
	}
	for name, body := range pdftest.Hostile() {
		doc, _, err := w.Read(context.Background(), "", body, Limits{Pages: 50, Chars: 500_000, Time: 5 * time.Second})
		if doc != nil || !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), want[name]) {
			t.Errorf("%s: %v, want an error saying %q", name, err, want[name])
		}
	}
	if grown := int64(mapped()) - int64(before); grown > 32<<20 {
		t.Errorf("this process grew by %d MiB reading the hostile files", grown>>20)
	}
}

// TestWorkerLimits: a child that maps more than its memory is stopped and
// the PDF refused naming the limit; one that overruns its time is killed;
// a caller who gives up gets its context's error.
func TestWorkerLimits(t *testing.T) {
	w := testWorker(t)
	// 1 MiB is less than the runtime maps before it reads anything.
	small := NewWorker(WorkerConfig{Command: w.command, Memory: 1 << 20})
	_, _, err := small.Read(context.Background(), "", pdftest.Paper().Bytes(), Limits{Pages: 50, Chars: 500_000, Time: 5 * time.Second})
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "MiB searxgate gives one PDF") {
		t.Errorf("memory: %v", err)
	}

	slow := NewWorker(WorkerConfig{Command: []string{"sleep", "30"}})
	slow.grace = 0
	_, _, err = slow.Read(context.Background(), "", []byte("%PDF-1.4"), Limits{Pages: 1, Chars: 10, Time: 50 * time.Millisecond})
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "took longer than searxgate's 50ms") {
		t.Errorf("time: %v", err)
	}

	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := w.Read(ctx, "", pdftest.Paper().Bytes(), Limits{Pages: 50, Chars: 500_000, Time: 5 * time.Second}); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: %v", err)
	}
}

// TestWorkerReads: what the worker reads of a real PDF is what Extract
// reads in this process, and its errors are the same errors.
func TestWorkerReads(t *testing.T) {
	w := testWorker(t)
	lim := Limits{Pages: 50, Chars: 500_000, Time: 5 * time.Second}
	paper := pdftest.Paper().Bytes()
	here, err := Extract(context.Background(), paper, lim, time.Now)
	if err != nil {
		t.Fatal(err)
	}
	there, _, err := w.Read(context.Background(), "", paper, lim)
	if err != nil {
		t.Fatal(err)
	}
	if here.Markdown != there.Markdown || here.Title != there.Title || here.Summary() != there.Summary() || here.Author != there.Author {
		t.Errorf("in the worker:\n%+v\nhere:\n%+v", there, here)
	}
	scan := pdftest.Spec{Pages: []string{"q 468 0 0 648 72 72 cm /Im1 Do Q", ""}}
	if _, _, err := w.Read(context.Background(), "", scan.Bytes(), lim); !errors.Is(err, ErrNoText) || !strings.Contains(err.Error(), "without a text layer") {
		t.Errorf("scan: %v", err)
	}
}
