package sim

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/valyala/fasthttp"
)

// RunCLI runs `searxgate sim`: it starts a named fleet on 127.0.0.1,
// writes its directory file if asked, prints where each instance (and the
// control endpoint) listens, and serves until ctx ends. args are the
// arguments after "sim":
//
//	--n 40 --mix mixed --seed 1 --port 19000 --write-directory PATH
//	[--control-port P] [--latency-scale F] [--host 127.0.0.1] [--local-links]
//
// Bad flags return an error wrapping ErrUsage; -h prints the usage and
// returns nil.
func RunCLI(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("searxgate sim", flag.ContinueOnError)
	n := fs.Int("n", 40, "number of instances (1..1000)")
	mix := fs.String("mix", "mixed", "named fleet: healthy, mixed or hostile")
	seed := fs.Int64("seed", 1, "seed of every random choice (mix, jitter, directory priors)")
	port := fs.Int("port", 19000, "port of the first instance, the others follow; 0 takes any free port per instance")
	host := fs.String("host", "127.0.0.1", "loopback address to listen on")
	dirPath := fs.String("write-directory", "", "write the fleet's searx.space-shaped instances.json to this file")
	ctrlPort := fs.Int("control-port", -1, "serve the control endpoint (GET /truth, /instances, /instances.json; POST /reset) on this port; 0 takes any free port, -1 none")
	scale := fs.Float64("latency-scale", 1, "multiply every instance's latency by this factor")
	local := fs.Bool("local-links", false, "results link to pages the instances serve themselves, on loopback, instead of example domains")
	fs.SetOutput(io.Discard)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout, fs)
			return nil
		}
		return fmt.Errorf("%w: %s (searxgate sim --help lists the flags)", ErrUsage, strings.Replace(err.Error(), " -", " --", 1))
	}
	switch {
	case fs.NArg() > 0:
		return fmt.Errorf("%w: unexpected argument %q", ErrUsage, fs.Arg(0))
	case *n < 1 || *n > 1000:
		return fmt.Errorf("%w: --n must be between 1 and 1000, not %d", ErrUsage, *n)
	case *port != 0 && (*port < 1 || *port+*n-1 > 65535):
		return fmt.Errorf("%w: --port %d cannot hold %d consecutive ports (0, or 1..%d)", ErrUsage, *port, *n, 65536-*n)
	case *ctrlPort < -1 || *ctrlPort > 65535:
		return fmt.Errorf("%w: --control-port must be -1, 0 or a port, not %d", ErrUsage, *ctrlPort)
	case *ctrlPort > 0 && *port != 0 && *ctrlPort >= *port && *ctrlPort < *port+*n:
		return fmt.Errorf("%w: --control-port %d is one of the instances' ports %d..%d", ErrUsage, *ctrlPort, *port, *port+*n-1)
	case !(*scale > 0):
		return fmt.Errorf("%w: --latency-scale must be above 0, not %v", ErrUsage, *scale)
	case !isLoopback(*host):
		return fmt.Errorf("%w: --host %q is not a loopback address", ErrUsage, *host)
	}
	cfgs, err := Mix(*mix, *n, *seed)
	if err != nil {
		return fmt.Errorf("%w: --mix: %w", ErrUsage, err)
	}
	f, err := Start(Config{Instances: cfgs, Host: *host, BasePort: *port, Seed: *seed, LatencyScale: *scale, LocalLinks: *local})
	if err != nil {
		return err
	}
	defer f.Close()

	if *dirPath != "" {
		if err := writeFileAtomic(*dirPath, f.Directory()); err != nil {
			return fmt.Errorf("sim: --write-directory: %w", err)
		}
	}
	var ctrl *fasthttp.Server
	ctrlDone := make(chan struct{})
	if *ctrlPort >= 0 {
		ln, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*ctrlPort)))
		if err != nil {
			return fmt.Errorf("sim: --control-port: %w", err)
		}
		ctrl = &fasthttp.Server{Handler: f.ControlHandler(), ReadTimeout: 10 * time.Second, IdleTimeout: 10 * time.Second, Logger: fasthttpLogger{f.log}}
		go func() {
			defer close(ctrlDone)
			_ = ctrl.Serve(ln)
		}()
		fmt.Fprintf(stdout, "control\thttp://%s/\tGET /truth, /instances, /instances.json; POST /reset\n", ln.Addr())
	} else {
		close(ctrlDone)
	}
	for _, in := range f.Instances() {
		fmt.Fprintf(stdout, "%s\t%s\t%s\n", in.ID(), in.URL(), in.Behaviour())
	}
	if *dirPath != "" {
		fmt.Fprintf(stdout, "directory\t%s\n", *dirPath)
	}
	fmt.Fprintf(stdout, "serving %d instances (mix %s, seed %d) until interrupted\n", *n, *mix, *seed)

	<-ctx.Done()
	var errs []error
	if ctrl != nil {
		errs = append(errs, ctrl.Shutdown())
	}
	<-ctrlDone
	errs = append(errs, f.Close())
	return errors.Join(errs...)
}

// printUsage writes sim's help: its flags written --name, as searxgate's
// other commands write theirs, with their defaults.
func printUsage(w io.Writer, fs *flag.FlagSet) {
	fmt.Fprint(w, "Usage: searxgate sim [flags]\n\nRuns a fleet of fake SearXNG instances on 127.0.0.1 until interrupted.\n\nFlags:\n")
	fs.VisitAll(func(f *flag.Flag) {
		kind, usage := flag.UnquoteUsage(f)
		line := "  --" + f.Name
		if kind != "" {
			line += " " + kind
		}
		fmt.Fprintln(w, line)
		fmt.Fprintf(w, "      %s", usage)
		if f.DefValue != "" && f.DefValue != "false" {
			fmt.Fprintf(w, " (default %s)", f.DefValue)
		}
		fmt.Fprintln(w)
	})
}

// writeFileAtomic writes b to path through a temporary file and a rename.
func writeFileAtomic(path string, b []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".instances-*.json")
	if err != nil {
		return err
	}
	if _, err := tmp.Write(b); err != nil {
		_ = tmp.Close()
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		_ = os.Remove(tmp.Name())
		return err
	}
	return os.Rename(tmp.Name(), path)
}
