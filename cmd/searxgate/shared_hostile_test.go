package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/sim"
)

// TestReplicaProcessOnAHostileRedis: the shipped binary on a Redis that
// answers every command with a string announcing 100 GB (then an array
// of two billion, then a length past int64) starts, serves, stays alive,
// and says why it keeps to its own share; once Redis answers properly it
// shares again.
func TestReplicaProcessOnAHostileRedis(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	srv := redistest.Start(t)
	hostile := redistest.HostileProxy(t, srv)
	hostile.Set([]byte("$100000000000\r\n"))
	_, dir := startFleet(t, 28, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	p := startProc(t, append(serveArgs(dir, t.TempDir(), "--redis", hostile.URL(), "--egress", "test",
		"--redis-timeout", "500ms"), "--secret", testSecret)...)
	for i, reply := range []string{"$100000000000\r\n", "*2000000000\r\n", "$9223372036854775000\r\n"} {
		hostile.Set([]byte(reply))
		p.mustSearch(t, fmt.Sprintf("hostile redis %d", i))
	}
	select {
	case <-p.exited:
		t.Fatalf("searxgate exited on a hostile Redis:\n%s", p.stderr.String())
	default:
	}
	if hostile.Hits() == 0 {
		t.Fatal("the hostile Redis was never asked")
	}
	if log := p.stderr.String(); !strings.Contains(log, "a reply past searxgate's bounds") {
		t.Fatalf("the log does not say why Redis is not used:\n%s", log)
	}
	hostile.Set(nil)
	deadline := time.Now().Add(20 * time.Second)
	for !strings.Contains(p.stderr.String(), "redis is back: budgets, refusals and answers are shared again") {
		if time.Now().After(deadline) {
			t.Fatalf("not shared within 20 s of Redis answering properly:\n%s", p.stderr.String())
		}
		time.Sleep(50 * time.Millisecond)
	}
	p.mustSearch(t, "hostile redis gone")
}
