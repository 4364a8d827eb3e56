package main

import (
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/redistest"
	"github.com/searxgate/searxgate/sim"
)

// TestReplicaProcesses: three searxgate processes on one redis-server
// share answers; one without --secret refuses to start and says which
// flag it needs; one stopped with SIGTERM leaves the replicas seen at
// once.
func TestReplicaProcesses(t *testing.T) {
	t.Parallel() // it waits on real time: see parallelWaits
	srv := redistest.Start(t)
	fleet, dir := startFleet(t, 27, []sim.InstanceConfig{{Behaviour: sim.Fast, Latency: -1, JSON: true}})
	shared := func() []string {
		return serveArgs(dir, t.TempDir(), "--redis", srv.URL(), "--egress", "test", "--redis-timeout", "500ms")
	}

	bare := launch(t, shared()...)
	if code := bare.wait(t, 30*time.Second); code == 0 {
		t.Fatal("a replica without --secret started")
	}
	if log := bare.stderr.String(); !strings.Contains(log, "--secret (SEARXGATE_SECRET)") {
		t.Fatalf("the refusal to start does not name --secret:\n%s", log)
	}

	var ps []*proc
	for range 3 {
		ps = append(ps, startProc(t, append(shared(), "--secret", testSecret)...))
	}
	for i, p := range ps {
		if !strings.Contains(p.stderr.String(), "redis answers: budgets, refusals and answers are shared") {
			t.Fatalf("replica %d does not say it shares:\n%s", i, p.stderr.String())
		}
	}
	if n, err := srv.Do("ZCARD", "searxgate:g:test:replicas"); err != nil || n != "3" {
		t.Fatalf("replicas seen: %q, %v; want 3", n, err)
	}
	ps[0].mustSearch(t, "between processes")
	waitAnswerInRedis(t, srv)
	before := totalSearches(fleet)
	if a := ps[1].mustSearch(t, "between processes"); a.header.Get("X-Searxgate-Cache") != "hit" {
		t.Fatalf("another process answered with X-Searxgate-Cache: %q, want hit", a.header.Get("X-Searxgate-Cache"))
	}
	if after := totalSearches(fleet); after != before {
		t.Fatalf("another process asked an instance again (%d -> %d searches)", before, after)
	}

	ps[2].signal(t, syscall.SIGTERM)
	if code := ps[2].wait(t, 20*time.Second); code != 0 {
		t.Fatalf("exit code %d after SIGTERM", code)
	}
	if n, err := srv.Do("ZCARD", "searxgate:g:test:replicas"); err != nil || n != "2" {
		t.Fatalf("replicas seen once one stopped: %q, %v; want 2", n, err)
	}
}
