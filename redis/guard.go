package redis

import (
	"context"
	"errors"
	"fmt"
	"net"
	"syscall"
)

// The Redis client allocates whatever length a reply announces: a bulk
// of $100000000000 or an array of *2000000000 takes the process down
// before a byte of it arrives. Every connection is therefore read through
// a guard that follows the replies' headers (RESP2 and RESP3) as they
// stream by, and fails the read, before the client sees the header, when
// a reply announces more than searxgate ever asks for. The client then
// drops the connection and the operation fails as on a broken network:
// the replica keeps to its own share, as on a timeout (Shared.down).
//
// A guard on the connection, rather than a check after each command,
// because the allocation happens inside the client, before any reply
// reaches searxgate's code; and rather than a patched client, because it
// holds for every command, script and message the client reads.

// Bounds on one reply, each well above what searxgate reads.
const (
	// MaxValue is the longest string a reply may hold: twice the
	// largest answer searxgate writes (Put never writes a longer
	// record; an answer is about results.MaxAnswerBytes, 512 KiB, plus
	// its markup, sealed).
	MaxValue = 2 << 20
	// maxReplyBytes bounds the strings of one reply together (Wait reads
	// two answers at once; a drop reads headers only).
	maxReplyBytes = 2*MaxValue + 64<<10
	// maxElems bounds the elements one reply announces, nested ones
	// included: the longest asked for is a SCAN of 512 (which may give a
	// few more).
	maxElems = 1 << 16
	// maxDepth bounds nesting: searxgate reads at most two levels.
	maxDepth = 16
	// maxLine bounds a header, a status, an error or a number.
	maxLine = 64 << 10
)

// ErrReply is the error of a read whose reply announced more than the
// bounds above, or was not RESP at all.
var ErrReply = errors.New("redis: a reply past searxgate's bounds (a hostile or broken server)")

// level is one aggregate being read.
type level struct {
	left int  // its entries still to come
	attr bool // attributes (RESP3 '|')
}

// guard follows the RESP stream of one connection.
type guard struct {
	err   error
	state byte    // what the next byte is: 0 a type, 'l' in a line, 'b' in a string's body
	typ   byte    // the type of the header being read
	n     int64   // the header's number so far; the body's bytes left
	neg   bool    // the header's number is negative
	digit bool    // the header has a digit
	cr    bool    // the header's CR came
	open  bool    // a reply is being read
	line  int     // the bytes of the current line
	stack []level // the levels open in the reply being read
	elems int     // the elements the reply announced so far
	bytes int64   // the string bytes the reply announced so far
}

// scan checks the next bytes of the stream; it returns ErrReply (wrapped)
// at the first byte that breaks a bound, and every time after.
func (g *guard) scan(p []byte) error {
	for i := 0; i < len(p) && g.err == nil; i++ {
		switch g.state {
		case 'b':
			skip := min(int64(len(p)-i), g.n)
			g.n -= skip
			i += int(skip) - 1
			if g.n == 0 {
				g.state = 0
				g.done()
			}
		case 'l':
			g.lineByte(p[i])
		default:
			g.start(p[i])
		}
	}
	return g.err
}

// start reads a reply's type byte.
func (g *guard) start(c byte) {
	if !g.open {
		g.open, g.elems, g.bytes = true, 0, 0 // a new reply
	}
	switch c {
	case '$', '!', '=', '*', '%', '~', '>', '|', '+', '-', ':', '_', ',', '#', '(':
	default:
		g.fail("type %q", c)
		return
	}
	g.typ, g.state, g.n, g.neg, g.digit, g.cr, g.line = c, 'l', 0, false, false, false, 0
}

// lineByte reads one byte of a line: a header's length, or a simple
// value (skipped).
func (g *guard) lineByte(c byte) {
	g.line++
	if g.line > maxLine {
		g.fail("a line over %d bytes", maxLine)
		return
	}
	if c == '\n' {
		g.endLine()
		return
	}
	if !counted(g.typ) {
		return
	}
	switch {
	case g.cr:
		g.fail("a %q header with %q after CR", g.typ, c)
	case c == '\r':
		g.cr = true
	case c == '-' && g.line == 1:
		g.neg = true
	case c >= '0' && c <= '9':
		g.digit = true
		g.n = g.n*10 + int64(c-'0')
		if g.n > maxReplyBytes {
			g.fail("a %q header over %d", g.typ, maxReplyBytes)
		}
	default:
		g.fail("a %q header with %q", g.typ, c)
	}
}

// counted reports whether typ's header is a length.
func counted(typ byte) bool {
	switch typ {
	case '$', '!', '=', '*', '%', '~', '>', '|':
		return true
	}
	return false
}

// endLine acts on a complete line.
func (g *guard) endLine() {
	g.state = 0
	if !counted(g.typ) {
		g.done()
		return
	}
	if !g.digit || !g.cr || (g.neg && g.n != 1) {
		g.fail("a %q header without a length", g.typ)
		return
	}
	if g.neg { // null
		if g.typ != '$' && g.typ != '*' {
			g.fail("a null %q", g.typ)
			return
		}
		g.done()
		return
	}
	switch g.typ {
	case '$', '!', '=':
		g.str(g.n)
	default:
		g.agg(g.n)
	}
}

// str checks a string of n bytes and skips its body.
func (g *guard) str(n int64) {
	g.bytes += n
	if n > MaxValue || g.bytes > maxReplyBytes {
		g.fail("a string of %d bytes (at most %d, %d a reply)", n, MaxValue, maxReplyBytes)
		return
	}
	g.state, g.n = 'b', n+2 // and its CRLF
}

// agg checks an aggregate of n entries and opens its level.
func (g *guard) agg(n int64) {
	if g.typ == '%' || g.typ == '|' {
		n *= 2 // keys and values
	}
	g.elems += int(n)
	switch {
	case g.elems > maxElems:
		g.fail("%d elements in one reply (at most %d)", g.elems, maxElems)
	case n == 0:
		if g.typ != '|' {
			g.done() // empty
		}
	case len(g.stack) >= maxDepth:
		g.fail("a reply nested over %d levels", maxDepth)
	default:
		g.stack = append(g.stack, level{left: int(n), attr: g.typ == '|'})
	}
}

// done counts one complete value at the current level, closing the
// levels it completes, and the reply with the last. Attributes precede
// the value they describe: their level closing completes nothing.
func (g *guard) done() {
	for {
		if len(g.stack) == 0 {
			g.open = false
			return
		}
		top := len(g.stack) - 1
		g.stack[top].left--
		if g.stack[top].left > 0 {
			return
		}
		attr := g.stack[top].attr
		g.stack = g.stack[:top]
		if attr {
			return
		}
	}
}

func (g *guard) fail(format string, args ...any) {
	g.err = fmt.Errorf("%w: %s", ErrReply, fmt.Sprintf(format, args...))
}

// guardedConn is a connection read through a guard.
type guardedConn struct {
	net.Conn
	g guard // only Read touches it: the client reads a connection from one goroutine at a time
}

// Read reads from the connection and hands the bytes on only once the
// guard passed them: a header past the bounds never reaches the client.
func (c *guardedConn) Read(p []byte) (int, error) {
	if c.g.err != nil {
		return 0, c.g.err
	}
	n, err := c.Conn.Read(p)
	if gerr := c.g.scan(p[:n]); gerr != nil {
		return 0, gerr
	}
	return n, err
}

// guardedSysConn is a guarded plain socket: the client's health check
// peeks at it (without reading) to find connections the server closed.
type guardedSysConn struct {
	*guardedConn
	sys syscall.Conn
}

func (c guardedSysConn) SyscallConn() (syscall.RawConn, error) { return c.sys.SyscallConn() }

// guardDial wraps dial so that every connection it makes is guarded.
func guardDial(dial func(ctx context.Context, network, addr string) (net.Conn, error)) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := dial(ctx, network, addr)
		if err != nil {
			return nil, err
		}
		gc := &guardedConn{Conn: conn}
		if sys, ok := conn.(syscall.Conn); ok {
			return guardedSysConn{gc, sys}, nil
		}
		return gc, nil
	}
}
