-- A task the run cancelled (more of its tasks had failed than its
-- max_failures) is told from one an operator cancelled: a redrive of the
-- run sends the first back to wait, and leaves the second cancelled.
ALTER TABLE tasks ADD COLUMN cancelled_by_run INTEGER NOT NULL DEFAULT 0;
