-- A lease token is unique in the store, not a count per task: every
-- change of a task's owner (a claim, a rescue) takes the next number of
-- this one counter, inside the writer's transaction. Two tasks never
-- share a token, so a result reported under one task's token is refused
-- for any other, and a downstream can fence its writes by the largest
-- token it has seen. The counter starts past every token already given
-- (counted per task until now), so a new one is never an old one.
CREATE TABLE lease_tokens (
    one  INTEGER PRIMARY KEY CHECK (one = 1),
    last INTEGER NOT NULL
);
INSERT INTO lease_tokens (one, last) SELECT 1, max(
    (SELECT coalesce(max(lease_token), 0) FROM tasks),
    (SELECT coalesce(max(lease_token), 0) FROM attempts));
