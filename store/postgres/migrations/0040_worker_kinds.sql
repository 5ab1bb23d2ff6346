-- The kinds each worker serves (sorted), recorded when it registers, so
-- that work no live worker serves can be flagged. A column with a
-- constant default is added without rewriting the table.
ALTER TABLE workers ADD COLUMN kinds text[] NOT NULL DEFAULT '{}';
