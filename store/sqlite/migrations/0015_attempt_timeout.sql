-- An attempt whose timeout was learned (task.AutoTimeout) keeps the
-- timeout it ran under and how it was chosen, for grit task and the
-- dashboard: the task keeps only that it asked for one. 0 and '' for a
-- fixed timeout, which is the task's.
ALTER TABLE attempts ADD COLUMN timeout INTEGER NOT NULL DEFAULT 0;
ALTER TABLE attempts ADD COLUMN timeout_source TEXT NOT NULL DEFAULT '';
