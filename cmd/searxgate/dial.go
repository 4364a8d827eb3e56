package main

import (
	"sync"

	"github.com/searxgate/searxgate/directory"
)

// ipResolver resolves names for the upstream dialer; tests give their own.
type ipResolver = directory.IPResolver

// maxDialNotes bounds the hosts dialNotes remembers.
const maxDialNotes = 4096

// dialNotes remembers, per host, why the last dial to it failed
// (directory.DialPrivate, DialDNS, DialRefused; forgotten once a dial
// succeeds), so that the start-up check can say why instances are
// unreachable. Its note method is the dialer's OnFailure.
type dialNotes struct {
	mu     sync.Mutex // guards byHost
	byHost map[string]string
}

func (n *dialNotes) note(host, why string) {
	if n == nil {
		return
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if why == "" {
		delete(n.byHost, host)
		return
	}
	if n.byHost == nil {
		n.byHost = make(map[string]string)
	}
	if _, ok := n.byHost[host]; !ok && len(n.byHost) >= maxDialNotes {
		return
	}
	n.byHost[host] = why
}

// why is the reason the last dial to host failed, "" when none is known.
func (n *dialNotes) why(host string) string {
	if n == nil {
		return ""
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.byHost[host]
}
