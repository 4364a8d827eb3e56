package main

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"strings"
	"sync"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/searxgate/searxgate/internal/clock"
	"github.com/searxgate/searxgate/internal/logevery"
)

// errorLog is the fasthttp server's Logger. fasthttp's messages carry what
// a client sent (a malformed request's header, with its query, cookies and
// Authorization token) and the client's address; errorLog never formats
// them. It reads only the kind of error from the message's format and its
// error argument, and writes one line per kind per interval, saying how
// many of that kind it left out since the last one, so that a flood of bad
// requests cannot fill the log.
type errorLog struct {
	log   *slog.Logger
	every time.Duration
	clock clock.Clock

	mu    sync.Mutex                // guards kinds
	kinds map[string]*logevery.Gate // keyed by the kinds below only: bounded
}

// errLogEvery is how often one kind of server error may be logged.
const errLogEvery = time.Minute

func newErrorLog(log *slog.Logger, every time.Duration, clk clock.Clock) *errorLog {
	return &errorLog{log: log, every: every, clock: clk, kinds: map[string]*logevery.Gate{}}
}

// The kinds of server error. Each is a fixed text: nothing of a request
// or of a client ever becomes part of one.
const (
	kindMalformedHeader = "a client sent a malformed request header"
	kindMalformed       = "a client sent a malformed request"
	kindHeaderTooLarge  = "a client sent a request header over the size limit"
	kindBodyTooLarge    = "a client sent a request body over the size limit"
	kindBrokenChunk     = "a client sent a broken chunked body"
	kindReadTimeout     = "a client was too slow to send its request"
	kindPerIP           = "a client address reached --max-conns-per-ip; its new connections are refused"
	kindConcurrency     = "client connections reached --max-conns; new ones are refused"
	kindAccept          = "accepting a connection failed"
	kindOther           = "the HTTP server reported a problem"
)

// Printf implements fasthttp.Logger.
func (e *errorLog) Printf(format string, args ...any) {
	kind, level, attrs := classifyServerError(format, args)
	e.mu.Lock()
	g := e.kinds[kind]
	if g == nil {
		g = &logevery.Gate{}
		e.kinds[kind] = g
	}
	e.mu.Unlock()
	n, ok := g.Pass(e.clock.Now(), e.every)
	if !ok {
		return
	}
	attrs = append(attrs, slog.String("component", "http"))
	if n > 0 {
		attrs = append(attrs, slog.Int("suppressed", n)) // of this kind, since the last line
	}
	e.log.LogAttrs(context.Background(), level, kind, attrs...)
}

// classifyServerError names the kind of a fasthttp message from its format
// (fasthttp's formats are literals) and, for a connection's error, from the
// error's type. The only detail kept is an accept error's text, which is
// about the listener (too many open files, say), never about a client.
func classifyServerError(format string, args []any) (string, slog.Level, []slog.Attr) {
	switch {
	case strings.HasPrefix(format, "error when serving connection"):
		var err error
		if len(args) > 0 {
			err, _ = args[len(args)-1].(error)
		}
		return connErrorKind(err), slog.LevelInfo, nil
	case strings.Contains(format, "exceeds MaxConnsPerIP"):
		return kindPerIP, slog.LevelWarn, nil
	case strings.Contains(format, "concurrent connections are served"):
		return kindConcurrency, slog.LevelWarn, nil
	case strings.Contains(format, "error when accepting"):
		var attrs []slog.Attr
		for _, a := range args {
			if err, ok := a.(error); ok {
				attrs = append(attrs, slog.String("err", err.Error()))
			}
		}
		return kindAccept, slog.LevelError, attrs
	}
	return kindOther, slog.LevelWarn, nil
}

// connErrorKind names the kind of error that ended a client's connection.
func connErrorKind(err error) string {
	var small *fasthttp.ErrSmallBuffer
	var chunk fasthttp.ErrBrokenChunk
	var ne net.Error
	switch {
	case err == nil:
		return kindOther
	case errors.As(err, &small):
		return kindHeaderTooLarge
	case errors.Is(err, fasthttp.ErrBodyTooLarge):
		return kindBodyTooLarge
	case errors.As(err, &chunk):
		return kindBrokenChunk
	case errors.As(err, &ne) && ne.Timeout():
		return kindReadTimeout
	case strings.HasPrefix(err.Error(), "error when reading request headers"):
		return kindMalformedHeader
	}
	return kindMalformed
}
