-- Each group's circuit breaker (breaker.Circuit as JSON), shared by every
-- process on the store.
CREATE TABLE groups (
    name       TEXT    NOT NULL PRIMARY KEY,
    circuit    TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
