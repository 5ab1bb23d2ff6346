-- Durable steps (store.Stepper): the results of a task's handler's steps,
-- recorded as they finish, so that a later attempt of the task answers
-- them without running them again. A step is recorded only by the
-- attempt that holds the task's lease; its rows go with their task
-- (retention deletes them in the same round).
CREATE TABLE steps (
    task_id     bigint      NOT NULL,
    seq         int         NOT NULL,
    name        text        NOT NULL,
    occurrence  int         NOT NULL,
    attempt     int         NOT NULL,
    result      json        NOT NULL,
    recorded_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (task_id, seq),
    UNIQUE (task_id, name, occurrence)
);
