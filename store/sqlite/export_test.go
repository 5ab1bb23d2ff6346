package sqlite

import "time"

// SetWatchInterval sets how often the watchers started from now read
// data_version, and returns what restores it.
func SetWatchInterval(d time.Duration) (restore func()) {
	old := watchInterval.Swap(int64(d))
	return func() { watchInterval.Store(old) }
}

// Watching reports whether a watcher runs for s's file.
func Watching(s *Store) bool {
	s.hub.mu.Lock()
	defer s.hub.mu.Unlock()
	return s.hub.stop != nil
}
