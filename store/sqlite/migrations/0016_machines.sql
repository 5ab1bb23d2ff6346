-- State machines (store.Machines): each instance's state, opaque to the
-- store, written at the version its writer read with the task of the
-- state it enters, in one transaction. due is when a worker next has work
-- on it (NULL: none), in microseconds since the epoch.
CREATE TABLE fsm_instances (
    machine TEXT    NOT NULL,
    key     TEXT    NOT NULL,
    state   TEXT    NOT NULL,
    due     INTEGER,
    version INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    PRIMARY KEY (machine, key)
) WITHOUT ROWID;
CREATE INDEX fsm_instances_due ON fsm_instances (machine, due) WHERE due IS NOT NULL;
