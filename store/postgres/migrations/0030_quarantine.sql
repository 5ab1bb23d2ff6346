-- Quarantined items (store.Quarantiner): the rows a handler set aside
-- with grit.Quarantine while its task went on, kept until an operator
-- replays or drops them. They outlive their task: retention does not
-- prune them. A task sets one item aside once (its JSON's digest is
-- unique by task), so a retried attempt does not count it twice.
CREATE TABLE quarantined (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    task_id     bigint      NOT NULL,
    queue       text        NOT NULL,
    kind        text        NOT NULL,
    attempt     integer     NOT NULL,
    replay_kind text        NOT NULL DEFAULT '',
    item        text        NOT NULL,
    digest      text        NOT NULL,
    error       text        NOT NULL,
    fingerprint text        NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    UNIQUE (task_id, digest)
);
CREATE INDEX quarantined_fingerprint ON quarantined (fingerprint, id);
