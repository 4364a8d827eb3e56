package sim

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"os"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/valyala/fasthttp"
	"github.com/valyala/fasthttp/fasthttputil"
)

// Fleet is a set of running simulated instances.
type Fleet struct {
	cfg       Config
	now       func() time.Time
	start     time.Time // the fleet's clock when it started (flapping phase)
	log       *slog.Logger
	instances []*Instance
	byAddr    map[string]*Instance // "host:port" -> instance; read-only after Start
	dir       []byte               // Directory(); read-only after Start
	priors    map[string]Prior     // read-only after Start
	done      chan struct{}        // closed by Close: handlers and hijacked connections end
	slowQuery time.Duration        // what a SlowQueryPrefix query adds; read-only after Start

	mu      sync.Mutex // guards closing and every wg.Add after Start
	closing bool
	wg      sync.WaitGroup // serve loops and hijacked connections

	bombMu sync.Mutex // guards bombs
	bombs  map[int][]byte

	closeOnce sync.Once
	closeErr  error
}

// Start starts the fleet: every instance listening on Host (TCP) or in
// memory, answering until Close.
func Start(cfg Config) (*Fleet, error) {
	if cfg.Host == "" {
		cfg.Host = "127.0.0.1"
	}
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	log := cfg.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	f := &Fleet{
		cfg:    cfg,
		now:    now,
		start:  now(),
		log:    log,
		byAddr: make(map[string]*Instance, len(cfg.Instances)),
		done:   make(chan struct{}),
		bombs:  map[int][]byte{},
	}
	f.slowQuery = cmp.Or(cfg.SlowQuery, defaultSlowQuery)
	if cfg.LatencyScale > 0 {
		f.slowQuery = time.Duration(float64(f.slowQuery) * cfg.LatencyScale)
	}
	ids := map[string]bool{}
	for i, ic := range cfg.Instances {
		ic = ic.withDefaults(cfg.LatencyScale)
		if ic.ID == "" {
			ic.ID = fmt.Sprintf("sim-%02d", i+1)
		}
		if ids[ic.ID] {
			f.closeListeners()
			return nil, fmt.Errorf("%w: instance ID %q is used twice", ErrConfig, ic.ID)
		}
		ids[ic.ID] = true
		in, err := f.newInstance(i, ic)
		if err != nil {
			f.closeListeners()
			return nil, err
		}
		f.instances = append(f.instances, in)
		f.byAddr[in.addr] = in
	}
	var err error
	if f.dir, f.priors, err = f.directory(); err != nil {
		f.closeListeners()
		return nil, err
	}
	for _, in := range f.instances {
		var ln net.Listener = in.ln
		if in.mem != nil {
			ln = in.mem
		}
		if ln == nil {
			continue
		}
		f.wg.Add(1)
		go func(in *Instance, ln net.Listener) {
			defer f.wg.Done()
			if err := in.server.Serve(ln); err != nil && !f.isClosing() {
				f.log.Error("sim: instance stopped serving", "id", in.cfg.ID, "err", err)
			}
		}(in, ln)
	}
	return f, nil
}

// newInstance builds instance i and its listener.
func (f *Fleet) newInstance(i int, ic InstanceConfig) (*Instance, error) {
	cfg := f.cfg
	in := &Instance{
		f:       f,
		cfg:     ic,
		rnd:     rand.New(rand.NewPCG(uint64(cfg.Seed), uint64(i+1))),
		clients: map[string]*client{},
		truth:   Truth{ID: ic.ID, Behaviour: ic.Behaviour, Formats: map[string]uint64{}},
	}
	perm := in.rnd.Perm(len(enginePool))
	engines := make([]string, 3)
	for j := range engines {
		engines[j] = enginePool[perm[j]]
	}
	engines = engineListOf(ic.Behaviour, engines)
	in.token = fmt.Sprintf("%016x", in.rnd.Uint64())
	in.offq = offTopicQueries[in.rnd.IntN(len(offTopicQueries))]

	dead := ic.Behaviour == Dead
	switch {
	case cfg.InMemory:
		base := cfg.BasePort
		if base == 0 {
			base = inMemoryBasePort
		}
		in.port = base + i
		if !dead {
			in.mem = fasthttputil.NewInmemoryListener()
			in.mem.SetLocalAddr(&net.TCPAddr{IP: net.ParseIP(cfg.Host), Port: in.port})
		}
	default:
		port := 0
		if cfg.BasePort > 0 {
			port = cfg.BasePort + i
		}
		if dead {
			// The port is held, bound but not listening, for the fleet's
			// life: connections are refused and nothing else can take it.
			p, c, err := reservePort(cfg.Host, port)
			if err != nil {
				return nil, fmt.Errorf("sim: instance %s: %w", ic.ID, err)
			}
			in.port, in.reserved = p, c
			break
		}
		ln, err := net.Listen("tcp", net.JoinHostPort(cfg.Host, strconv.Itoa(port)))
		if err != nil {
			return nil, fmt.Errorf("sim: instance %s: %w", ic.ID, err)
		}
		in.port = ln.Addr().(*net.TCPAddr).Port
		in.ln = ln
	}
	in.addr = net.JoinHostPort(cfg.Host, strconv.Itoa(in.port))
	in.url = "http://" + in.addr + "/"
	in.site = site{
		Name:         ic.ID,
		BaseURL:      in.url,
		JSON:         ic.JSON,
		Limiter:      ic.Behaviour.limiterOn(),
		LinkToken:    ic.Behaviour == LinkToken,
		Public:       ic.Behaviour == LinkToken,
		EngineList:   engines,
		Categories:   ic.Categories,
		Autocomplete: ic.Autocomplete,
		Rich:         cfg.LocalLinks,
	}
	if in.site.Limiter {
		in.site.TokenCSS = "/client" + in.token + ".css"
	}
	in.server = &fasthttp.Server{
		Handler:               in.handle,
		NoDefaultServerHeader: true,
		NoDefaultContentType:  true,
		ReadTimeout:           30 * time.Second,
		WriteTimeout:          30 * time.Second,
		IdleTimeout:           30 * time.Second,
		MaxRequestBodySize:    1 << 20,
		CloseOnShutdown:       true,
		Logger:                fasthttpLogger{f.log},
	}
	return in, nil
}

// fasthttpLogger hands fasthttp's messages to slog.
type fasthttpLogger struct{ l *slog.Logger }

func (l fasthttpLogger) Printf(format string, args ...any) {
	l.l.Debug("sim: " + fmt.Sprintf(format, args...))
}

func (f *Fleet) isClosing() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.closing
}

// track counts one more connection handler for Close to wait on; false
// once the fleet is closing.
func (f *Fleet) track() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.closing {
		return false
	}
	f.wg.Add(1)
	return true
}

func (f *Fleet) closeListeners() {
	for _, in := range f.instances {
		if in.reserved != nil {
			_ = in.reserved.Close()
		}
		if in.ln != nil {
			_ = in.ln.Close()
		}
		if in.mem != nil {
			_ = in.mem.Close()
		}
	}
}

// Close stops every listener, ends hanging and stalled answers, and waits
// for every handler to return. It is safe to call more than once.
func (f *Fleet) Close() error {
	f.closeOnce.Do(func() {
		f.mu.Lock()
		f.closing = true
		f.mu.Unlock()
		close(f.done)
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		var wg sync.WaitGroup
		var errMu sync.Mutex // guards errs
		var errs []error
		for _, in := range f.instances {
			if in.ln == nil && in.mem == nil {
				continue
			}
			wg.Add(1)
			go func(in *Instance) {
				defer wg.Done()
				if err := in.server.ShutdownWithContext(ctx); err != nil && !errors.Is(err, net.ErrClosed) {
					errMu.Lock()
					errs = append(errs, fmt.Errorf("sim: closing %s: %w", in.cfg.ID, err))
					errMu.Unlock()
				}
			}(in)
		}
		wg.Wait()
		// A listener whose Serve had not started yet is closed here, so
		// that Serve returns at once.
		f.closeListeners()
		f.wg.Wait()
		f.closeErr = errors.Join(errs...)
	})
	return f.closeErr
}

// Instances returns the fleet's instances, in the order of Config.Instances.
func (f *Fleet) Instances() []*Instance {
	out := make([]*Instance, len(f.instances))
	copy(out, f.instances)
	return out
}

// Instance returns the instance with the given ID, or nil.
func (f *Fleet) Instance(id string) *Instance {
	for _, in := range f.instances {
		if in.cfg.ID == id {
			return in
		}
	}
	return nil
}

// URLs returns every instance's base URL, in order.
func (f *Fleet) URLs() []string {
	out := make([]string, len(f.instances))
	for i, in := range f.instances {
		out[i] = in.url
	}
	return out
}

// Dial connects to the instance at addr ("host:port" of its URL): through
// its in-memory listener in an InMemory fleet, over TCP otherwise. A Dead
// instance refuses (the error matches syscall.ECONNREFUSED); an address
// that is not the fleet's is refused with ErrNotFleet, so that a client
// wired to Dial can never leave the fleet. Use it as fasthttp.Client.Dial.
func (f *Fleet) Dial(addr string) (net.Conn, error) {
	select {
	case <-f.done:
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: ErrClosed}
	default:
	}
	in := f.byAddr[addr]
	if in == nil {
		return nil, &net.OpError{Op: "dial", Net: "tcp", Err: fmt.Errorf("%w: %s", ErrNotFleet, addr)}
	}
	switch {
	case in.mem != nil:
		return in.mem.Dial()
	case in.ln != nil:
		return net.Dial("tcp", addr)
	}
	return nil, &net.OpError{Op: "dial", Net: "tcp", Addr: &net.TCPAddr{IP: net.ParseIP(f.cfg.Host), Port: in.port},
		Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}
}

// Truth returns what every instance saw, by instance URL.
func (f *Fleet) Truth() map[string]Truth {
	out := make(map[string]Truth, len(f.instances))
	for _, in := range f.instances {
		out[in.url] = in.Truth()
	}
	return out
}

// ResetTruth zeroes every instance's counters and forgets its clients.
func (f *Fleet) ResetTruth() {
	for _, in := range f.instances {
		in.ResetTruth()
	}
}

// ControlHandler serves the fleet's control endpoint: GET /truth (Truth
// by instance URL, JSON), GET /instances.json (Directory), GET /instances
// (id, url and behaviour of each instance) and POST /reset (ResetTruth).
func (f *Fleet) ControlHandler() fasthttp.RequestHandler {
	return func(ctx *fasthttp.RequestCtx) {
		write := func(v any) {
			b, err := json.MarshalIndent(v, "", "  ")
			if err != nil {
				ctx.Error(err.Error(), 500)
				return
			}
			ctx.SetContentType("application/json")
			ctx.SetBody(b)
		}
		switch string(ctx.Path()) {
		case "/truth":
			write(f.Truth())
		case "/instances.json":
			ctx.SetContentType("application/json")
			ctx.SetBody(f.dir)
		case "/instances":
			type row struct {
				ID        string    `json:"id"`
				URL       string    `json:"url"`
				Behaviour Behaviour `json:"behaviour"`
			}
			rows := make([]row, len(f.instances))
			for i, in := range f.instances {
				rows[i] = row{in.cfg.ID, in.url, in.cfg.Behaviour}
			}
			write(rows)
		case "/reset":
			if !ctx.IsPost() {
				ctx.Error("POST only", 405)
				return
			}
			f.ResetTruth()
			ctx.SetStatusCode(204)
		default:
			ctx.Error("not found: try /truth, /instances, /instances.json or POST /reset", 404)
		}
	}
}

// flapUp reports whether a Flapping instance is up at now: up for a
// period, then down for one, from the fleet's start.
func (f *Fleet) flapUp(now time.Time, period time.Duration) bool {
	el := now.Sub(f.start)
	if el < 0 || period <= 0 {
		return true
	}
	return (el/period)%2 == 0
}

// sleep waits d in real time; false when the fleet closed meanwhile.
func (f *Fleet) sleep(d time.Duration) bool {
	if d <= 0 {
		select {
		case <-f.done:
			return false
		default:
			return true
		}
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-f.done:
		return false
	}
}

// bomb returns a gzip stream that inflates to size bytes of a JSON answer
// padded with whitespace; made once per size.
func (f *Fleet) bomb(size int) []byte {
	f.bombMu.Lock()
	defer f.bombMu.Unlock()
	if b, ok := f.bombs[size]; ok {
		return b
	}
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestSpeed)
	head := []byte(`{"query": "bomb", "number_of_results": 0, "results": [`)
	tail := []byte(`], "answers": [], "corrections": [], "infoboxes": [], "suggestions": [], "unresponsive_engines": []}`)
	_, _ = zw.Write(head)
	pad := bytes.Repeat([]byte{' '}, 1<<16)
	for n := max(0, size-len(head)-len(tail)); n > 0; {
		m := min(n, len(pad))
		_, _ = zw.Write(pad[:m])
		n -= m
	}
	_, _ = zw.Write(tail)
	_ = zw.Close()
	f.bombs[size] = buf.Bytes()
	return f.bombs[size]
}

var _ io.Closer = (*Fleet)(nil)
