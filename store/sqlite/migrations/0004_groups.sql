-- Each group (store.Group as JSON: its breaker and the breaker's
-- settings), shared by every process on the store.
CREATE TABLE groups (
    name       TEXT    NOT NULL PRIMARY KEY,
    state      TEXT    NOT NULL,
    updated_at INTEGER NOT NULL
) WITHOUT ROWID;
