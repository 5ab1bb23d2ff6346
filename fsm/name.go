package fsm

// NameProblem says what is wrong with the name of a machine, state or
// event, or "": the one rule, for the commands and the API that take
// names before any machine is known.
func NameProblem(name string) string { return nameProblem(name) }
