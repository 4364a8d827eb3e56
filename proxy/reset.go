package proxy

// ResetCounters clears every instance's counters searxgate keeps beside
// the pool's: its outcomes by kind and reason, its recent latencies, and
// its lifetime totals in /metrics. The operator's pool reset calls it
// with pool.Reset, so that /status, /status.json and /metrics all start
// again from zero together; to /metrics that is a counter reset, as a
// restart is, which rate() and increase() take in stride. Client search
// totals and the politeness budgets (what was really sent) stay.
func (p *Proxy) ResetCounters() {
	p.recs.mu.RLock()
	for _, r := range p.recs.m {
		if im := r.metrics; im != nil {
			im.reset()
		}
	}
	p.recs.mu.RUnlock()
	p.metrics.totals.Clear()
}

// reset clears im.
func (im *InstanceMetrics) reset() {
	im.mu.Lock()
	defer im.mu.Unlock()
	im.byKind = [NumKinds]uint64{}
	clear(im.byReason)
	im.next, im.n = 0, 0
}
