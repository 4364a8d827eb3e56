package cache

// SealedPending counts the answers waiting for a flush that are sealed
// already: none until a flush takes them.
func SealedPending(w *WriteBehind) int {
	w.mu.Lock()
	defer w.mu.Unlock()
	n := 0
	for _, a := range w.pending {
		if a.sealed.Value != nil {
			n++
		}
	}
	return n
}

// FlushHolds reports whether a flush holds off drops and purges now.
func FlushHolds(w *WriteBehind) bool {
	if w.flushing.TryLock() {
		w.flushing.Unlock()
		return false
	}
	return true
}
