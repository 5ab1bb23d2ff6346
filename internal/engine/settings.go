package engine

// Settings returns the configuration the engine runs with: its Config
// with the defaults filled in.
func (e *Engine) Settings() Config { return e.cfg }
