-- A worker's last failed claim, for grit status.
ALTER TABLE workers ADD COLUMN last_error TEXT NOT NULL DEFAULT '';
ALTER TABLE workers ADD COLUMN last_error_at INTEGER;
ALTER TABLE workers ADD COLUMN failures INTEGER NOT NULL DEFAULT 0;
