-- A worker's last failed claim, for grit status.
ALTER TABLE workers
    ADD COLUMN last_error    text        NOT NULL DEFAULT '',
    ADD COLUMN last_error_at timestamptz,
    ADD COLUMN failures      integer     NOT NULL DEFAULT 0;
