//go:build unix

package main

import (
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/searxgate/searxgate/sim"
)

// TestWaitersSleep: searches waiting for a busy instance cost no CPU
// while they wait: four waiters over three seconds cost about what an
// idle gateway does (a wide margin: waking every millisecond costs
// several times that).
func TestWaitersSleep(t *testing.T) {
	_, g := ownFleet(t, sim.InstanceConfig{Behaviour: sim.Fast, Latency: 3500 * time.Millisecond, JSON: true},
		"--own-max-in-flight", "1", "--deadline", "4s")
	idle := cpuDuring(t, 3*time.Second, func() {})
	var wg sync.WaitGroup
	busy := cpuDuring(t, 3*time.Second, func() {
		for i := range 5 {
			wg.Add(1)
			go func() { defer wg.Done(); g.get(t, "/search?format=json&q=wait+"+strconv.Itoa(i), nil) }()
		}
	})
	wg.Wait()
	if depth := g.app.proxy.Metrics().QueueDepth(); depth != 0 {
		t.Fatalf("%d searches still waiting", depth)
	}
	if busy > idle+150*time.Millisecond {
		t.Errorf("four waiters cost %v of CPU over 3 s, an idle gateway %v: they poll", busy, idle)
	}
	t.Logf("CPU over 3 s: idle %v, four waiting %v", idle, busy)
}

// cpuDuring is the CPU time (user and system) this process used in the d
// after start ran.
func cpuDuring(t *testing.T, d time.Duration, start func()) time.Duration {
	t.Helper()
	var before, after syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &before); err != nil {
		t.Skipf("getrusage: %v: CPU time cannot be measured here", err)
	}
	start()
	time.Sleep(d)
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &after); err != nil {
		t.Fatal(err)
	}
	tv := func(r syscall.Rusage) time.Duration {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano())
	}
	return tv(after) - tv(before)
}
