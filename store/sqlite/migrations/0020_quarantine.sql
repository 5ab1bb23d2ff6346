-- Quarantined items (store.Quarantiner): the rows a handler set aside
-- with grit.Quarantine while its task went on, kept until an operator
-- replays or drops them. They outlive their task: retention does not
-- prune them. A task sets one item aside once (its JSON's digest is
-- unique by task), so a retried attempt does not count it twice.
CREATE TABLE quarantined (
    id          INTEGER PRIMARY KEY,
    task_id     INTEGER NOT NULL,
    queue       TEXT    NOT NULL,
    kind        TEXT    NOT NULL,
    attempt     INTEGER NOT NULL,
    replay_kind TEXT    NOT NULL DEFAULT '',
    item        TEXT    NOT NULL,
    digest      TEXT    NOT NULL,
    error       TEXT    NOT NULL,
    fingerprint TEXT    NOT NULL,
    created_at  INTEGER NOT NULL,
    UNIQUE (task_id, digest)
);
CREATE INDEX quarantined_fingerprint ON quarantined (fingerprint, id);
