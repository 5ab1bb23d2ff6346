-- Where a task came from: 'api' (grit server's API), 'file:HOST' (a task
-- file submitted on HOST), '' (code with the store's own credentials, and
-- every task before origins were kept). A worker runs a process task from
-- elsewhere than its own host's task files only if it allows it, so a
-- claimed row carries it.
ALTER TABLE tasks ADD COLUMN origin text NOT NULL DEFAULT '';
ALTER TYPE claimed_task ADD ATTRIBUTE origin text;
