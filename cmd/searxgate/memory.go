package main

// memoryMargin is what the Go runtime may use beyond the caches' bounds:
// the searches and pages in flight, the store's write transactions, the
// goroutines' stacks.
const memoryMargin = 64 << 20

// memoryBound is the most the caches hold (the answers', the
// suggestions', the read pages') and the PDFs being read, plus
// memoryMargin.
func (a *App) memoryBound() (limit, caches int64) {
	caches = a.proxy.Cache().Bytes()
	if a.reader != nil {
		caches += a.reader.CacheBytes() + a.reader.QueueBytes()
	}
	return caches + memoryMargin, caches
}

// setMemoryLimit sets the Go runtime's soft memory limit (with set, which
// is debug.SetMemoryLimit) to memoryBound, so that the heap is collected
// before it passes what the caches may hold plus a margin: left to GOGC
// alone it grew to twice what was live, to 246 MB with 70 MB live under
// sim/load's miss storm. GOMEMLIMIT, when the operator sets it, is the
// runtime's and is left alone.
func (a *App) setMemoryLimit(getenv func(string) string, set func(int64) int64) {
	if v := getenv("GOMEMLIMIT"); v != "" {
		a.log.Info("Go's memory limit is GOMEMLIMIT's", "GOMEMLIMIT", v)
		return
	}
	limit, caches := a.memoryBound()
	set(limit)
	a.log.Info("Go's memory limit is the caches' and the PDF queue's bounds and a margin (GOMEMLIMIT overrides it)",
		"limit_mib", limit>>20, "caches_mib", caches>>20, "margin_mib", memoryMargin>>20)
}
