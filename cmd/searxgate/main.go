package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime/debug"
	"strings"
	"syscall"

	"github.com/searxgate/searxgate/reader/pdf"
	"github.com/searxgate/searxgate/sim"
)

func main() {
	// A PDF worker (a child this binary starts to read one PDF) is done
	// here, before anything of searxgate starts.
	pdf.ServeIfWorker()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := Main(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}

// commands are the subcommands, as --help lists them. A new subcommand
// adds its line here and its case in Main.
var commands = []struct{ use, what string }{
	{"searxgate [serve] [flags]", "serve searches (the default); its flags are below"},
	{"searxgate mcp [flags]", "speak MCP on stdin/stdout, forwarding to a running searxgate"},
	{"searxgate sim [flags]", "run fake SearXNG instances on 127.0.0.1 (sim --help: its flags)"},
	{"searxgate healthcheck [flags]", "exit 0 when the searxgate on --listen answers /healthz, else 1"},
	{"searxgate version", "print the version and the revision it was built from"},
	{"searxgate help", "print this help (also --help, -h)"},
	{"searxgate help settings", "print every setting as Markdown (docs/settings.md)"},
}

// Main runs searxgate with args (without the program name) and returns the
// exit code. It serves until ctx ends.
func Main(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cmd := "serve"
	if len(args) > 0 && !strings.HasPrefix(args[0], "-") {
		cmd, args = args[0], args[1:]
	}
	switch cmd {
	case "serve":
		return serve(ctx, args, stdout, stderr, getenv)
	case "mcp":
		return mcpCommand(ctx, args, os.Stdin, os.Stdout, stderr, getenv)
	case "healthcheck":
		return healthcheckCommand(ctx, args, stdout, stderr, getenv)
	case "version":
		fmt.Fprintln(stdout, versionLine(Version, Revision))
		return 0
	case "sim":
		if err := sim.RunCLI(ctx, args, stdout, stderr); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return 0
			}
			fmt.Fprintln(stderr, "searxgate sim:", err)
			return 2
		}
		return 0
	case "help":
		if len(args) == 1 && args[0] == "settings" {
			writeSettingsDoc(stdout)
			return 0
		}
		printHelp(stdout)
		return 0
	default:
		fmt.Fprintf(stderr, "searxgate: unknown command %q (searxgate --help lists the commands)\n", cmd)
		return 2
	}
}

// serve runs searxgate serve; --help (-h) prints the help to stdout.
func serve(ctx context.Context, args []string, stdout, stderr io.Writer, getenv func(string) string) int {
	cfg, err := parseConfig(args, getenv, stdout)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		fmt.Fprintln(stderr, "searxgate:", err)
		return 2
	}
	log := newLogger(cfg, stderr)
	for _, w := range unknownVars(os.Environ(), getenv) {
		log.Warn(w)
	}
	app, err := NewApp(ctx, cfg, log)
	if err != nil {
		log.Error("cannot start", "err", err)
		return 1
	}
	app.setMemoryLimit(getenv, debug.SetMemoryLimit)
	if err := app.Run(ctx); err != nil {
		log.Error("stopped with an error", "err", err)
		return 1
	}
	log.Info("stopped")
	return 0
}

func newLogger(cfg Config, w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(cfg.LogLevel))
	opts := &slog.HandlerOptions{Level: level}
	if cfg.LogFormat == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
