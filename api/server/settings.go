package server

// Settings returns the configuration the server runs with: its Config
// with the defaults filled in.
func (s *Server) Settings() Config { return s.cfg }
