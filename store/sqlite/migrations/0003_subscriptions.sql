-- Topics' subscribers: an event published to a topic becomes a task of
-- each subscription's kind, in its queue and group.
CREATE TABLE subscriptions (
    topic text NOT NULL,
    kind  text NOT NULL,
    queue text NOT NULL,
    group_name text NOT NULL DEFAULT '',
    PRIMARY KEY (topic, kind, queue)
) WITHOUT ROWID;
