-- Each group (store.Group as JSON: its breaker and the breaker's
-- settings), shared by the fleet and changed under the row's lock.
CREATE TABLE groups (
    name       text        PRIMARY KEY,
    state      jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
