-- Each group's circuit breaker (breaker.Circuit as JSON), shared by the
-- fleet and changed under the row's lock.
CREATE TABLE groups (
    name       text        PRIMARY KEY,
    circuit    jsonb       NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);
