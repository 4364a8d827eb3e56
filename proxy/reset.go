package proxy

// ResetCounters clears every instance's counters searxgate keeps beside
// the pool's: its outcomes by kind and reason, its recent latencies, and
// its lifetime totals in /metrics. The operator's pool reset calls it
// with pool.Reset, so that /status, /status.json and /metrics all start
// again from zero together; to /metrics that is a counter reset, as a
// restart is, which rate() and increase() take in stride. Client search
// totals and the politeness budgets (what was really sent) stay.
func (p *Proxy) ResetCounters() {
	p.recs.ResetMetrics()
	p.metrics.totals.Clear()
}
