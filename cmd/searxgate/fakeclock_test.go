package main

import (
	"io"
	"testing"
	"time"

	"github.com/searxgate/searxgate/internal/clock"
)

// startGatewayOn runs searxgate in-process with args (--listen and the
// rest: nothing is added) on the clock clk, names resolved by none, and
// returns once its start-up check has judged the pool.
func startGatewayOn(t *testing.T, clk *clock.Fake, args ...string) *gateway {
	t.Helper()
	cfg, err := parseConfig(args, env(nil), io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.clock, cfg.resolver = clk, &failResolver{}
	g, err := runGateway(t, cfg, testLog())
	if err != nil {
		t.Fatal(err)
	}
	<-g.app.checked
	return g
}

// queuedStep is how far getAsTimePasses moves the clock at a time while a
// search waits in searxgate's queue.
const queuedStep = 50 * time.Millisecond

// getAsTimePasses is g.get on a gateway whose clock is clk: while the
// request waits in searxgate's queue for a slot, clk moves on queuedStep
// at a time, as real time would; while it is anywhere else (an upstream
// search, the answer) clk stands still. A guard of 60 s of real time fails
// a request that never ends.
func (g *gateway) getAsTimePasses(t *testing.T, clk *clock.Fake, path string) answer {
	t.Helper()
	done := make(chan answer, 1)
	go func() {
		resp, err := loopbackClient.Get("http://" + g.addr + path)
		if err != nil {
			done <- answer{body: []byte(err.Error())}
			return
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			done <- answer{body: []byte(err.Error())}
			return
		}
		done <- answer{resp.StatusCode, resp.Header, b}
	}()
	guard := time.NewTimer(60 * time.Second)
	defer guard.Stop()
	poll := time.NewTicker(time.Millisecond)
	defer poll.Stop()
	for {
		select {
		case a := <-done:
			if a.status == 0 {
				t.Fatalf("GET %s: %s", path, a.body)
			}
			return a
		case <-guard.C:
			t.Fatalf("GET %s: no answer after 60 s (%d waiting; timers in %v)", path, g.app.proxy.Metrics().QueueDepth(), clk.Pending())
		case <-poll.C:
			if g.app.proxy.Metrics().QueueDepth() > 0 {
				clk.Advance(queuedStep)
			}
		}
	}
}
