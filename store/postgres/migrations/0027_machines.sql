-- State machines (store.Machines): each instance's state, opaque to the
-- store, written at the version its writer read with the task of the
-- state it enters, in one transaction. due is when a worker next has work
-- on it (NULL: none); workers read the instances due of the machines they
-- know.
CREATE TABLE fsm_instances (
    machine text        NOT NULL,
    key     text        NOT NULL,
    state   json        NOT NULL,
    due     timestamptz,
    version bigint      NOT NULL,
    updated timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (machine, key)
);
CREATE INDEX fsm_instances_due ON fsm_instances (machine, due) WHERE due IS NOT NULL;
