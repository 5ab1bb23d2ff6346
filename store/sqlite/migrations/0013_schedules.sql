-- Schedules (store.Scheduler): periodic tasks that every worker ticks.
-- The store reads neither the declaration (def) nor the state the
-- tickers keep; a write applies only at the version its writer read.
-- due is when a ticker next has work on a schedule (NULL: never, a
-- paused one), in microseconds since the epoch.
CREATE TABLE schedules (
    name    TEXT    NOT NULL PRIMARY KEY,
    def     TEXT    NOT NULL,
    state   TEXT    NOT NULL,
    due     INTEGER,
    version INTEGER NOT NULL,
    updated INTEGER NOT NULL
) WITHOUT ROWID;
CREATE INDEX schedules_due ON schedules (due) WHERE due IS NOT NULL;
