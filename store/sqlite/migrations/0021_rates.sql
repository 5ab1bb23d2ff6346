-- Rates (store.Rate): calls a second per queue, kind, group or tenant,
-- each a token bucket (rate.Bucket, as JSON) that workers take from for
-- a whole claim batch at once.
CREATE TABLE rates (
    scope  TEXT NOT NULL CHECK (scope IN ('queue', 'kind', 'group', 'tenant')),
    name   TEXT NOT NULL,
    rate   REAL NOT NULL CHECK (rate > 0),
    burst  REAL NOT NULL CHECK (burst >= 0),
    bucket TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (scope, name)
) WITHOUT ROWID;
