package redistest

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
)

// Hostile is a TCP proxy that passes commands to a Server, or, while it is
// set to, answers every command itself with a reply of its choosing (a
// header announcing 100 GB, say) and passes nothing on: a hostile or
// broken Redis.
type Hostile struct {
	ln    net.Listener
	reply atomic.Pointer[[]byte]
	hits  atomic.Int64
}

// HostileProxy starts a Hostile in front of s (passing everything until
// Set); it stops when the test ends. With s nil it answers every
// command with its reply, and drops connections while that is nil.
func HostileProxy(t testing.TB, s *Server) *Hostile {
	t.Helper()
	addr := ""
	if s != nil {
		addr = s.Addr()
	}
	h := &Hostile{}
	h.ln = proxyTo(t, addr, func(cl, up net.Conn, spawn func(func())) {
		spawn(func() { h.serve(cl, up) })
		if up != nil {
			spawn(func() { _, _ = io.Copy(cl, up); _ = cl.Close() })
		}
	})
	return h
}

// serve reads the client's commands: each read is passed on to up, or
// answered with the reply when one is set.
func (h *Hostile) serve(cl, up net.Conn) {
	defer cl.Close()
	if up != nil {
		defer up.Close()
	}
	buf := make([]byte, 32<<10)
	for {
		n, err := cl.Read(buf)
		if n > 0 {
			if r := h.reply.Load(); r != nil {
				h.hits.Add(1)
				if _, werr := cl.Write(*r); werr != nil {
					return
				}
			} else if up == nil {
				return
			} else if _, werr := up.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// Set makes every command from now on answered with reply (nil: passed
// on again).
func (h *Hostile) Set(reply []byte) {
	if reply == nil {
		h.reply.Store(nil)
		return
	}
	h.reply.Store(&reply)
}

// Hits is how many reads of commands were answered with the reply.
func (h *Hostile) Hits() int64 { return h.hits.Load() }

// URL is the redis:// URL of the proxy.
func (h *Hostile) URL() string { return "redis://" + h.ln.Addr().String() + "/0" }
