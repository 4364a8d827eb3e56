package pdf

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"strings"
	"time"

	"github.com/searxgate/searxgate/reader/internal/fair"
)

// workerEnv, set to "1", makes a process that calls ServeIfWorker a PDF
// worker: it reads one request on stdin, answers on stdout and exits.
const workerEnv = "SEARXGATE_PDF_WORKER"

// memoryExit is the worker's exit code when it reached its memory limit.
const memoryExit = 3

// A Worker reads PDFs in child processes, one per PDF. A file can make a
// PDF parser allocate without end, recurse until its stack is gone or
// loop: in Go none of these can be recovered, and in one process they
// would end searxgate. A child that reaches its memory limit, overflows
// its stack or runs past its time is killed, and the PDF is refused with
// what it cost; searxgate goes on.
type Worker struct {
	command []string
	memory  int64
	turns   *fair.Queue   // the workers, shared fairly among the clients waiting
	grace   time.Duration // how long past the PDF's time a child may take
	wait    time.Duration // how long a read waits for its turn
}

// ErrNoWorker: a read's turn for a worker did not come within
// WorkerConfig.Wait.
var ErrNoWorker = errors.New("no PDF worker was free")

// WorkerConfig says how to start the children and what each may use.
type WorkerConfig struct {
	// Command starts a program whose main calls ServeIfWorker first
	// (default this program: on Linux /proc/self/exe, the file as it was
	// started, even if it has been replaced on disk since).
	Command []string
	// Memory is what one child may map, in bytes (default 128 MiB).
	Memory int64
	// Workers is how many PDFs are read at once (default 2); a read waits
	// for its turn within its context, the clients waiting taking turns
	// (package fair): one client's queue does not hold back another's.
	Workers int
	// Wait is how long a read waits for its turn at most (default 15 s);
	// past it the read is refused with ErrNoWorker.
	Wait time.Duration
}

// NewWorker returns a Worker with c's settings.
func NewWorker(c WorkerConfig) *Worker {
	if len(c.Command) == 0 {
		c.Command = []string{selfExe()}
	}
	if c.Memory <= 0 {
		c.Memory = 128 << 20
	}
	if c.Workers <= 0 {
		c.Workers = 2
	}
	if c.Wait <= 0 {
		c.Wait = 15 * time.Second
	}
	return &Worker{command: c.Command, memory: c.Memory, turns: fair.NewQueue(c.Workers), grace: grace, wait: c.Wait}
}

// Memory is what one child may map, in bytes.
func (w *Worker) Memory() int64 { return w.memory }

// Wait is how long a read waits for its turn at most.
func (w *Worker) Wait() time.Duration { return w.wait }

// request is what the worker reads first on stdin, on one line; the PDF's
// bytes follow.
type request struct {
	Limits Limits
	Memory int64
}

// answer is what the worker writes on stdout.
type answer struct {
	Doc  *Doc   `json:",omitempty"`
	Kind string `json:",omitempty"` // which of the errors below, "" for none
	Err  string `json:",omitempty"` // the error's text
}

var errKinds = map[string]error{"malformed": ErrMalformed, "encrypted": ErrEncrypted, "notext": ErrNoText}

// kindError is an error from the worker: its text, and the error it is.
type kindError struct {
	kind error
	text string
}

func (e *kindError) Error() string { return e.text }
func (e *kindError) Unwrap() error { return e.kind }

// grace is how long past the PDF's own time a child may take to start,
// stop and answer before it is killed.
const grace = 2 * time.Second

// Read reads the PDF in body as Extract does, in a child process, once
// client's turn for a worker comes, and returns what the child read or
// why it could not, and how long the child ran (what the read cost the
// workers). Its time runs from when its turn comes. A read whose ctx ends
// leaves the queue, or has its child killed at once.
func (w *Worker) Read(ctx context.Context, client string, body []byte, lim Limits) (*Doc, time.Duration, error) {
	waitCtx, cancel := context.WithTimeoutCause(ctx, w.wait, ErrNoWorker)
	release, err := w.turns.Wait(waitCtx, client)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, 0, ctx.Err()
		}
		return nil, 0, fmt.Errorf("%w within %s", ErrNoWorker, w.wait)
	}
	defer release()
	start := time.Now()
	doc, err := w.run(ctx, body, lim)
	return doc, time.Since(start), err
}

// run reads body in one child process.
func (w *Worker) run(ctx context.Context, body []byte, lim Limits) (*Doc, error) {
	runCtx, cancel := context.WithTimeout(ctx, lim.Time+w.grace)
	defer cancel()
	head, err := json.Marshal(request{Limits: lim, Memory: w.memory})
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(runCtx, w.command[0], w.command[1:]...)
	// Nothing of this process's environment (its secrets among it) goes
	// to the child: it needs none.
	cmd.Env = []string{workerEnv + "=1", "GOMAXPROCS=1", "GOMEMLIMIT=" + strconv.FormatInt(w.memory*3/4, 10), "GOTRACEBACK=none"}
	cmd.Stdin = io.MultiReader(bytes.NewReader(append(head, '\n')), bytes.NewReader(body))
	out := &capped{max: 8*lim.Chars + 1<<20}
	stderr := &capped{max: 4 << 10}
	cmd.Stdout, cmd.Stderr = out, stderr
	cmd.WaitDelay = time.Second
	childAttrs(cmd)
	// The child is killed when the thread that started it ends: keep the
	// thread until the child has.
	runtime.LockOSThread()
	runErr := cmd.Run()
	runtime.UnlockOSThread()
	switch {
	case ctx.Err() != nil:
		return nil, ctx.Err()
	case runCtx.Err() != nil:
		return nil, fmt.Errorf("%w (reading it took longer than searxgate's %s for one PDF)", ErrMalformed, lim.Time)
	case runErr != nil:
		return nil, w.died(runErr, stderr.String())
	case out.over:
		return nil, fmt.Errorf("%w (its text is larger than searxgate's limit)", ErrMalformed)
	}
	var a answer
	if err := json.Unmarshal(out.Bytes(), &a); err != nil {
		return nil, fmt.Errorf("the PDF worker's answer cannot be read: %v", err)
	}
	if a.Kind != "" {
		kind, ok := errKinds[a.Kind]
		if !ok {
			kind = ErrMalformed
		}
		return nil, &kindError{kind: kind, text: a.Err}
	}
	if a.Doc == nil {
		return nil, errors.New("the PDF worker answered nothing")
	}
	return a.Doc, nil
}

// died says why a child ended without answering: its memory, its stack,
// or another fault of the parser.
func (w *Worker) died(err error, stderr string) error {
	var exit *exec.ExitError
	switch {
	case errors.As(err, &exit) && exit.ExitCode() == memoryExit, strings.Contains(stderr, "out of memory"):
		return fmt.Errorf("%w (reading it needs more than the %d MiB searxgate gives one PDF)", ErrMalformed, w.memory>>20)
	case strings.Contains(stderr, "stack exceeds"), strings.Contains(stderr, "stack overflow"):
		return fmt.Errorf("%w (its objects nest without end)", ErrMalformed)
	case errors.As(err, &exit):
		return fmt.Errorf("%w (the parser failed on it: %s)", ErrMalformed, short(firstLine(stderr)))
	}
	return fmt.Errorf("the PDF worker could not be started: %v", err)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	if s == "" {
		return "no message"
	}
	return s
}

// capped keeps the first max bytes written to it and notes that more came.
type capped struct {
	bytes.Buffer
	max  int
	over bool
}

func (c *capped) Write(p []byte) (int, error) {
	if room := c.max - c.Len(); len(p) > room {
		c.over = true
		c.Buffer.Write(p[:max(room, 0)])
		return len(p), nil
	}
	return c.Buffer.Write(p)
}

// ServeIfWorker returns at once unless this process was started as a PDF
// worker; then it reads the request on stdin, writes the answer on stdout
// and exits. A program that gives Worker its own executable calls it
// first in main (and a test binary in TestMain).
func ServeIfWorker() {
	if os.Getenv(workerEnv) != "1" {
		return
	}
	os.Exit(serveWorker(os.Stdin, os.Stdout))
}

func serveWorker(in io.Reader, out io.Writer) int {
	all, err := io.ReadAll(in)
	if err != nil {
		return 1
	}
	line, body, _ := bytes.Cut(all, []byte("\n"))
	var req request
	if err := json.Unmarshal(line, &req); err != nil || req.Memory <= 0 {
		fmt.Fprintln(os.Stderr, "searxgate pdf worker: a bad request")
		return 1
	}
	// A parser that recurses without end meets this limit long before
	// the default gigabyte of stack.
	debug.SetMaxStack(16 << 20)
	go watchMemory(req.Memory)
	doc, err := Extract(context.Background(), body, req.Limits, time.Now)
	var a answer
	switch {
	case err == nil:
		a.Doc = doc
	default:
		a.Kind, a.Err = "malformed", err.Error()
		for k, e := range errKinds {
			if errors.Is(err, e) {
				a.Kind = k
			}
		}
	}
	if err := json.NewEncoder(out).Encode(a); err != nil {
		return 1
	}
	return 0
}

// watchMemory ends the process once the memory the runtime has mapped
// passes limit. It looks every millisecond; one allocation the system
// cannot give ends the process on its own.
func watchMemory(limit int64) {
	sample := []metrics.Sample{{Name: "/memory/classes/total:bytes"}}
	for {
		metrics.Read(sample)
		if int64(sample[0].Value.Uint64()) > limit {
			fmt.Fprintln(os.Stderr, "searxgate pdf worker: memory limit reached")
			os.Exit(memoryExit)
		}
		time.Sleep(time.Millisecond)
		runtime.Gosched()
	}
}
