-- Queues, kinds and tenants paused across the fleet: workers claim none
-- of their tasks until they are resumed. A row is a pause; pausing again
-- keeps the row, so since and who are those of the first pause.
CREATE TABLE pauses (
    scope TEXT    NOT NULL CHECK (scope IN ('queue', 'kind', 'tenant')),
    name  TEXT    NOT NULL,
    since INTEGER NOT NULL,
    who   TEXT    NOT NULL DEFAULT '',
    PRIMARY KEY (scope, name)
) WITHOUT ROWID;
