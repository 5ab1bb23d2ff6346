-- Results and awaits (store.Awaiter). A task keeps the result its handler
-- set last (grit.SetResult). A task whose handler awaits others
-- (grit.Await) is SENSING with a row in awaits for each of them that has
-- not ended, and awaits_left counting those rows: the end of each awaited
-- task deletes its rows and counts its awaiting tasks down, and the one
-- that brings a task to 0 makes it due. An awaited task is marked
-- (awaited), so that its plain success leaves the one-statement path
-- (succeed_alone) for the finish transaction, which wakes what awaits it:
-- the mark is on its own row, which the success rereads when the await
-- that set it commits first.
ALTER TABLE tasks ADD COLUMN result json;
ALTER TABLE tasks ADD COLUMN awaits_left integer NOT NULL DEFAULT 0;
ALTER TABLE tasks ADD COLUMN awaited boolean NOT NULL DEFAULT false;
CREATE TABLE awaits (
    child_id  bigint NOT NULL,
    parent_id bigint NOT NULL,
    PRIMARY KEY (child_id, parent_id)
);
CREATE INDEX awaits_parent ON awaits (parent_id);
