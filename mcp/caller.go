package mcp

import (
	"context"
	"strconv"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"
)

// requestHeader carries, from the access layer to the tools, the id under
// which the HTTP request's context is kept. A tool call then ends when its
// request does (the client closed the connection, the stdio bridge's call
// was cancelled): the SDK's stateless handler runs tools under a context
// of its own, which a client's going does not end for the older protocol
// versions. Whatever a client sends under this name is replaced.
const requestHeader = "X-Searxgate-Internal-Request"

// callers keeps the contexts of the HTTP requests being served, by id.
type callers struct {
	mu   sync.Mutex // guards next and byID
	next uint64
	byID map[string]context.Context
}

// add keeps ctx under a new id until remove is called.
func (c *callers) add(ctx context.Context) (id string, remove func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.byID == nil {
		c.byID = map[string]context.Context{}
	}
	c.next++
	id = strconv.FormatUint(c.next, 36)
	c.byID[id] = ctx
	return id, func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.byID, id)
	}
}

// withCaller is ctx, ended too when the HTTP request that carried req
// ends; done lets go of it.
func (s *Server) withCaller(ctx context.Context, req *sdk.CallToolRequest) (context.Context, func()) {
	if req == nil || req.Extra == nil || req.Extra.Header == nil {
		return ctx, func() {}
	}
	s.callers.mu.Lock()
	caller := s.callers.byID[req.Extra.Header.Get(requestHeader)]
	s.callers.mu.Unlock()
	if caller == nil {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(caller, func() { cancel(context.Cause(caller)) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}
