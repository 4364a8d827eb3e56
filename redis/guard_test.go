package redis

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/proxy/cache"
)

// hostileHeaders are replies that announce more than any process holds.
var hostileHeaders = []string{
	"$100000000000\r\n", "*2000000000\r\n", "$9223372036854775000\r\n", "$99999999999999999999999\r\n",
	"%1500000000\r\n", "~2000000000\r\n", ">2000000000\r\n", "|2000000000\r\n",
	"!100000000000\r\n", "=100000000000\r\n",
}

// array is a RESP array of n empty strings.
func array(n int) string {
	return "*" + strconv.Itoa(n) + "\r\n" + strings.Repeat("$0\r\n\r\n", n)
}

// bulk is a RESP string of n bytes.
func bulk(n int) string { return "$" + strconv.Itoa(n) + "\r\n" + strings.Repeat("x", n) + "\r\n" }

func TestGuardBounds(t *testing.T) {
	cases := []struct {
		name, in string
		ok       bool
	}{
		{"status", "+OK\r\n", true},
		{"error", "-ERR unknown command\r\n", true},
		{"integer", ":42\r\n", true},
		{"null string", "$-1\r\n", true},
		{"null array", "*-1\r\n", true},
		{"string", "$5\r\nhello\r\n", true},
		{"scan reply", "*2\r\n$1\r\n0\r\n" + array(700), true},
		{"nested", "*2\r\n*2\r\n:1\r\n:2\r\n$3\r\nabc\r\n", true},
		{"resp3 scalars", "_\r\n,1.5\r\n#t\r\n(123\r\n", true},
		{"map", "%1\r\n+a\r\n:1\r\n", true},
		{"attribute then value", "|1\r\n+a\r\n:1\r\n$2\r\nok\r\n", true},
		{"largest value", bulk(MaxValue), true},
		{"two largest values, one reply", "*2\r\n" + bulk(MaxValue) + bulk(MaxValue), true},
		{"largest values, one reply each", bulk(MaxValue) + bulk(MaxValue) + bulk(MaxValue), true},
		{"value past the bound", "$" + strconv.Itoa(MaxValue+1) + "\r\n", false},
		{"three largest values, one reply", "*3\r\n" + bulk(MaxValue) + bulk(MaxValue) + "$65537\r\n", false},
		{"array at the bound", array(maxElems), true},
		{"array past the bound", "*" + strconv.Itoa(maxElems+1) + "\r\n", false},
		{"nested arrays past the bound", "*2\r\n*" + strconv.Itoa(maxElems) + "\r\n", false},
		{"map past the bound", "%" + strconv.Itoa(maxElems/2+1) + "\r\n", false},
		{"too deep", strings.Repeat("*1\r\n", maxDepth+1), false},
		{"deep enough", strings.Repeat("*1\r\n", maxDepth) + ":1\r\n", true},
		{"unknown type", "x\r\n", false},
		{"long line", "+" + strings.Repeat("a", maxLine) + "\r\n", false},
		{"negative length", "$-2\r\n", false},
		{"plus length", "$+5\r\n", false},
		{"no length", "*\r\n", false},
		{"null map", "%-1\r\n", false},
	}
	for _, h := range hostileHeaders {
		cases = append(cases, struct {
			name, in string
			ok       bool
		}{"hostile " + strings.TrimSpace(h), h, false})
	}
	for _, c := range cases {
		var whole guard
		werr := whole.scan([]byte(c.in))
		if (werr == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.name, werr, c.ok)
		}
		if werr != nil && !errors.Is(werr, ErrReply) {
			t.Errorf("%s: %v, not ErrReply", c.name, werr)
		}
		var bytewise guard
		var berr error
		for i := 0; i < len(c.in) && berr == nil; i++ {
			berr = bytewise.scan([]byte{c.in[i]})
		}
		if (berr == nil) != (werr == nil) {
			t.Errorf("%s: byte by byte %v, whole %v", c.name, berr, werr)
		}
	}
}

// TestGuardedConnHoldsTheHeader: the bytes of a read that holds a header
// past the bounds never reach the client, and the connection stays
// failed.
func TestGuardedConnHoldsTheHeader(t *testing.T) {
	c := &guardedConn{Conn: &fakeConn{r: strings.NewReader("+OK\r\n$100000000000\r\n")}}
	buf := make([]byte, 4)
	var got []byte
	var err error
	for err == nil {
		var n int
		n, err = c.Read(buf)
		got = append(got, buf[:n]...)
	}
	// The client got the status, and never a whole line of the header.
	if !errors.Is(err, ErrReply) || !bytes.HasPrefix(got, []byte("+OK\r\n$")) || bytes.Count(got, []byte("\n")) != 1 {
		t.Fatalf("read %q, %v; want the status, part of the header, then ErrReply", got, err)
	}
	if n, err := c.Read(buf); n != 0 || !errors.Is(err, ErrReply) {
		t.Fatalf("after the refusal: %d, %v", n, err)
	}
}

// TestHostileRedis: a server that answers every command with a header
// announcing 100 GB (and the other hostile headers) leaves the replica
// running on its local share, saying why.
func TestHostileRedis(t *testing.T) {
	for _, h := range hostileHeaders {
		fake := redistest.HostileProxy(t, nil)
		fake.Set([]byte(h))
		s, err := New(Options{URL: fake.URL(), Secret: testSecret, Group: "hostile"})
		if err != nil {
			t.Fatal(err)
		}
		err = s.Connect(context.Background())
		if !errors.Is(err, ErrReply) {
			t.Fatalf("%q: connect %v, want ErrReply", h, err)
		}
		if st := s.Status(); st.Shared || !strings.Contains(st.LastError, "bounds") {
			t.Fatalf("%q: status %+v, want local, naming the bounds", h, st)
		}
		if ok, _ := s.Take(context.Background(), "https://a.example/", time.Now()); !ok {
			t.Fatalf("%q: the local share refused the first search", h)
		}
		if fake.Hits() == 0 {
			t.Fatalf("%q: the fake server was never asked", h)
		}
		_ = s.Close()
	}
}

// logCount counts the log lines that hold a text.
type logCount struct {
	mu  sync.Mutex // guards buf
	buf bytes.Buffer
}

func (l *logCount) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logCount) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// TestHostileRedisAfterStart: a shared replica whose Redis starts
// answering a 100 GB string goes to its local share at the first such
// reply, serves on, says it once however often Redis does it again, and
// shares again once Redis answers properly.
func TestHostileRedisAfterStart(t *testing.T) {
	srv := redistest.Start(t)
	h := redistest.HostileProxy(t, srv)
	var logs logCount
	s, err := New(Options{URL: h.URL(), Secret: testSecret, Group: "hostile-after", OpTimeout: testTimeout,
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	ctx := context.Background()
	if err := s.Connect(ctx); err != nil {
		t.Fatal(err)
	}
	key := cache.NewKeyer([]byte("k")).CacheKey("q")
	for round := range 3 {
		if !s.Status().Shared {
			t.Fatalf("round %d: not shared before the hostile replies", round)
		}
		h.Set([]byte("$100000000000\r\n"))
		if _, ok := s.Get(ctx, key); ok {
			t.Fatalf("round %d: a hit from a hostile reply", round)
		}
		if st := s.Status(); st.Shared || !strings.Contains(st.LastError, "bounds") {
			t.Fatalf("round %d: status %+v, want local, naming the bounds", round, st)
		}
		if ok, _ := s.Take(ctx, fmt.Sprintf("https://%d.example/", round), time.Now()); !ok {
			t.Fatalf("round %d: the local share refused", round)
		}
		h.Set(nil)
		for range s.opt.Recover {
			if err := s.heartbeat(ctx); err != nil {
				t.Fatalf("round %d: heartbeat on a proper Redis: %v", round, err)
			}
		}
	}
	if !s.Status().Shared {
		t.Fatal("not shared again once Redis answers properly")
	}
	if n := logs.count("redis answered past"); n != 1 {
		t.Fatalf("%d warnings of hostile replies in 3 rounds, want 1:\n%s", n, logs.buf.String())
	}
}

// TestPutSkipsValuesPastTheBound: an answer whose record could not be
// read back through the guard is never written.
func TestPutSkipsValuesPastTheBound(t *testing.T) {
	s, err := New(Options{URL: "redis://127.0.0.1:1/0", Secret: testSecret})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	s.up.Store(true)
	key := cache.NewKeyer([]byte("k")).CacheKey("q")
	now := time.Now()
	s.Put(key, cache.Entry{JSON: bytes.Repeat([]byte("a"), MaxValue), Instance: "https://a.example/", Expires: now.Add(time.Hour)})
	if n := len(s.writes); n != 0 {
		t.Fatalf("%d writes queued for a record past MaxValue", n)
	}
	s.Put(key, cache.Entry{JSON: bytes.Repeat([]byte("a"), MaxValue/2), Instance: "https://a.example/", Expires: now.Add(time.Hour)})
	if n := len(s.writes); n != 1 {
		t.Fatalf("%d writes queued for a record within MaxValue, want 1", n)
	}
}

// fakeConn is a connection that reads from r.
type fakeConn struct {
	net.Conn
	r io.Reader
}

func (f *fakeConn) Read(p []byte) (int, error) { return f.r.Read(p) }

// refCheck is a plain recursive reading of whole replies in b, for the
// fuzz target: errRef at the first value past the bounds or not RESP;
// nil when every whole reply passes (a cut last reply is not judged).
func refCheck(b []byte) error {
	for len(b) > 0 {
		st := &refState{}
		rest, err := st.value(b, 0)
		if err != nil {
			return err
		}
		if rest == nil {
			return nil // cut
		}
		b = rest
	}
	return nil
}

var errRef = errors.New("past the bounds")

type refState struct{ elems, bytes int64 }

// value reads one value at depth; rest nil means b was cut short.
func (st *refState) value(b []byte, depth int) (rest []byte, err error) {
	if len(b) == 0 {
		return nil, nil
	}
	typ := b[0]
	switch typ {
	case '+', '-', ':', '_', ',', '#', '(', '$', '!', '=', '*', '%', '~', '>', '|':
	default:
		return nil, errRef
	}
	i := bytes.IndexByte(b, '\n')
	line, rest := b[1:], []byte(nil)
	if i >= 0 {
		line, rest = b[1:i], b[i+1:]
	}
	if len(line)+1 > maxLine {
		return nil, errRef
	}
	if !strings.ContainsRune("$!=*%~>|", rune(typ)) {
		if i < 0 {
			return nil, nil
		}
		return rest, nil
	}
	body := string(line)
	switch {
	case strings.HasSuffix(body, "\r"):
		body = body[:len(body)-1]
	case i >= 0:
		return nil, errRef // go-redis refuses it too
	}
	digits := strings.TrimPrefix(body, "-")
	if strings.Trim(digits, "0123456789") != "" {
		return nil, errRef
	}
	if len(digits) > 0 {
		if v, perr := strconv.ParseInt(digits, 10, 64); perr != nil || v > maxReplyBytes {
			return nil, errRef
		}
	}
	if i < 0 {
		return nil, nil
	}
	if digits == "" {
		return nil, errRef
	}
	n, _ := strconv.ParseInt(body, 10, 64)
	if strings.HasPrefix(body, "-") && (body != "-1" || (typ != '$' && typ != '*')) {
		return nil, errRef
	}
	if n == -1 {
		return rest, nil
	}
	if n < 0 {
		return nil, errRef
	}
	switch typ {
	case '$', '!', '=':
		st.bytes += n
		if n > MaxValue || st.bytes > maxReplyBytes {
			return nil, errRef
		}
		if int64(len(rest)) < n+2 {
			return nil, nil
		}
		return rest[n+2:], nil
	}
	if typ == '%' || typ == '|' {
		n *= 2
	}
	st.elems += n
	if st.elems > maxElems || (n > 0 && depth >= maxDepth) {
		return nil, errRef
	}
	for range n {
		if rest, err = st.value(rest, depth+1); err != nil || rest == nil {
			return rest, err
		}
	}
	if typ == '|' {
		return st.value(rest, depth)
	}
	return rest, nil
}

// FuzzGuard: whatever the stream and however it is cut into reads, the
// guard never panics, gives the same verdict, and refuses every stream
// the plain reading finds past the bounds; what it passes, the plain
// reading passes.
func FuzzGuard(f *testing.F) {
	for _, h := range hostileHeaders {
		f.Add([]byte(h), uint8(3))
	}
	for _, s := range []string{"+OK\r\n", "*2\r\n$1\r\n0\r\n" + array(3), "|1\r\n+a\r\n:1\r\n$2\r\nok\r\n",
		"*1\r\n*1\r\n*1\r\n:1\r\n", bulk(100), "%2\r\n+a\r\n:1\r\n+b\r\n$-1\r\n", "*3\r\n$2\r\nab\r\n*-1\r\n:7\r\n"} {
		f.Add([]byte(s), uint8(1))
	}
	f.Fuzz(func(t *testing.T, in []byte, step uint8) {
		var whole guard
		werr := whole.scan(in)
		var cut guard
		var cerr error
		size := int(step%16) + 1
		for i := 0; i < len(in) && cerr == nil; i += size {
			cerr = cut.scan(in[i:min(i+size, len(in))])
		}
		if (werr == nil) != (cerr == nil) {
			t.Fatalf("whole %v, in reads of %d %v", werr, size, cerr)
		}
		rerr := refCheck(in)
		if rerr != nil && werr == nil {
			t.Fatalf("the plain reading refuses %q, the guard passed it", in)
		}
		if rerr == nil && werr != nil {
			t.Fatalf("the guard refused %q (%v), the plain reading passes it", in, werr)
		}
	})
}
