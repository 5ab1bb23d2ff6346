-- The kinds each worker serves (a JSON array, sorted), recorded when it
-- registers, so that work no live worker serves can be flagged.
ALTER TABLE workers ADD COLUMN kinds TEXT NOT NULL DEFAULT '[]';
