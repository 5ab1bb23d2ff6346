package postgres

// RawTaskRows is rawTaskRows, for the tests of the package's users.
var RawTaskRows = rawTaskRows
