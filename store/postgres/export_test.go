package postgres

// RawTaskRows is rawTaskRows, for the tests of the package's users.
var RawTaskRows = rawTaskRows

// SuccessDurationsSQL is successDurationsSQL, for the test of its plan.
const SuccessDurationsSQL = successDurationsSQL
