-- Results and awaits (store.Awaiter). A task keeps the result its handler
-- set last (grit.SetResult). A task whose handler awaits others
-- (grit.Await) is SENSING with a row in awaits for each of them that has
-- not ended, and awaits_left counting those rows: the end of each awaited
-- task deletes its rows and counts its awaiting tasks down, and the one
-- that brings a task to 0 makes it due.
ALTER TABLE tasks ADD COLUMN result TEXT;
ALTER TABLE tasks ADD COLUMN awaits_left INTEGER NOT NULL DEFAULT 0;
CREATE TABLE awaits (
    child_id  INTEGER NOT NULL,
    parent_id INTEGER NOT NULL,
    PRIMARY KEY (child_id, parent_id)
) WITHOUT ROWID;
CREATE INDEX awaits_parent ON awaits (parent_id);
