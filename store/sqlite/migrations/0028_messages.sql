-- Messages to tasks (store.Mailbox): kept until a handler of the task
-- receives one (grit.Receive), which takes it and records it as a step in
-- one transaction, or until retention deletes them with their task. A
-- task waiting for a message is SENSING with the topic it awaits, so that
-- a message of that topic makes it due at once.
CREATE TABLE messages (
    id      INTEGER PRIMARY KEY AUTOINCREMENT,
    task_id INTEGER NOT NULL,
    topic   TEXT    NOT NULL,
    payload TEXT    NOT NULL,
    sent_at INTEGER NOT NULL
);
CREATE INDEX messages_task ON messages (task_id, topic, id);
ALTER TABLE tasks ADD COLUMN awaits TEXT;
