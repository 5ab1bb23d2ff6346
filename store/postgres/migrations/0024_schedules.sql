-- Schedules (store.Scheduler): periodic tasks that every worker ticks.
-- The store reads neither the declaration (def) nor the state the
-- tickers keep; a write applies only at the version its writer read.
-- due is when a ticker next has work on a schedule (NULL: never, a
-- paused one); tickers read the rows due.
CREATE TABLE schedules (
    name    text        PRIMARY KEY,
    def     json        NOT NULL,
    state   json        NOT NULL,
    due     timestamptz,
    version bigint      NOT NULL,
    updated timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX schedules_due ON schedules (due) WHERE due IS NOT NULL;
