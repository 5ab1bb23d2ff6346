-- An attempt whose timeout was learned (task.AutoTimeout) keeps the
-- timeout it ran under and how it was chosen, for grit task and the
-- dashboard: the task keeps only that it asked for one. 0 and '' for a
-- fixed timeout, which is the task's. Such an attempt is never a plain
-- success (succeedSQL): it is written with its row, as one with output is.
ALTER TABLE attempts ADD COLUMN timeout_ns bigint NOT NULL DEFAULT 0,
    ADD COLUMN timeout_source text NOT NULL DEFAULT '';
