-- Rates (store.Rate): calls a second per queue, kind, group or tenant,
-- each a token bucket (rate.Bucket, as JSON) that workers take from for
-- a whole claim batch at once, under the rows' locks.
CREATE TABLE rates (
    scope  text             NOT NULL CHECK (scope IN ('queue', 'kind', 'group', 'tenant')),
    name   text             NOT NULL,
    rate   double precision NOT NULL CHECK (rate > 0),
    burst  double precision NOT NULL CHECK (burst >= 0),
    bucket jsonb            NOT NULL DEFAULT '{}',
    PRIMARY KEY (scope, name)
);
