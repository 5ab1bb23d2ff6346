-- Tasks belong to a tenant ('' for none); queues and tenants may have a
-- limit of running attempts, which workers keep to by counting after a
-- claim and skipping, for a moment, what is at its limit.
ALTER TABLE tasks ADD COLUMN tenant TEXT NOT NULL DEFAULT '';

CREATE TABLE limits (
    scope TEXT    NOT NULL CHECK (scope IN ('queue', 'tenant')),
    name  TEXT    NOT NULL,
    max   INTEGER NOT NULL CHECK (max > 0),
    PRIMARY KEY (scope, name)
) WITHOUT ROWID;
