-- Tasks belong to a tenant ("" for none); queues and tenants may have a
-- limit of running attempts across the fleet, which workers keep to by
-- counting after a claim and skipping, for a moment, what is at its limit.
ALTER TABLE tasks ADD COLUMN tenant text NOT NULL DEFAULT '';

CREATE TABLE limits (
    scope text    NOT NULL CHECK (scope IN ('queue', 'tenant')),
    name  text    NOT NULL,
    max   integer NOT NULL CHECK (max > 0),
    PRIMARY KEY (scope, name)
);

