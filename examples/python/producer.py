#!/usr/bin/python3
"""Enqueues the demo set of example.job tasks that worker.py works: one
of each action (ok, flaky, reject, later, slow), each under an
idempotency key, so that running this again enqueues nothing new and
prints the same ids, with "existed".

    ./producer.py --server 127.0.0.1:7420 --wait

With --wait it then follows the tasks until each has ended and prints
its final state and attempt. The token, if the server wants one, is
$GRIT_TOKEN.
"""

import argparse
import json
import sys
import time

import grpc

from gritconn import connect, duration, enum_name, pb, reason, rpc

KIND = "example.job"
# A retry policy, given as fields: up to 5 retries (6 attempts), backing
# off from 100ms up to 1s with full jitter: the string "5 100ms 1s", which
# the Node.js producer sends instead.
QUICK_RETRIES = pb.RetryPolicy(max_attempts=6, backoff=pb.Backoff(initial=duration(0.1), max=duration(1)))
# The states a task does not leave.
FINAL = {pb.TASK_STATE_SUCCESS, pb.TASK_STATE_FAILED, pb.TASK_STATE_DEAD_LETTER,
         pb.TASK_STATE_CANCELLED, pb.TASK_STATE_SKIPPED, pb.TASK_STATE_UPSTREAM_FAILED}
CALL_TIMEOUT = 10.0


def demo(slow_seconds):
    """The demo set: (action, args, retry policy)."""
    return [
        ("ok", {"action": "ok"}, None),
        ("flaky", {"action": "flaky", "failures": 2}, QUICK_RETRIES),
        # Its policy would retry; the worker's PERMANENT failure does not.
        ("reject", {"action": "reject"}, QUICK_RETRIES),
        ("later", {"action": "later", "seconds": 1}, None),
        ("slow", {"action": "slow", "seconds": slow_seconds}, None),
    ]


def enqueue(tasks, metadata, slow_seconds):
    """Enqueues the demo set and returns (action, id) in its order."""
    out = []
    for action, args, policy in demo(slow_seconds):
        new = pb.NewTask(kind=KIND, args=json.dumps(args).encode(), retry_policy=policy,
                         idempotency_key=f"demo-{action}")
        resp = tasks.Enqueue(pb.EnqueueRequest(task=new), metadata=metadata, timeout=CALL_TIMEOUT)
        print(f"enqueued {action} {resp.task.id}" + (" existed" if resp.existed else ""), flush=True)
        out.append((action, resp.task.id))
    return out


def wait(tasks, metadata, enqueued, timeout):
    """Polls each task until it is in a final state, then prints it; False
    if timeout (seconds) passed first."""
    deadline = time.monotonic() + timeout
    for action, task_id in enqueued:
        while True:
            task = tasks.Get(pb.GetRequest(id=task_id), metadata=metadata, timeout=CALL_TIMEOUT).task
            if task.state in FINAL:
                print(f"{action} {task.id} {enum_name(pb.TaskState, task.state)} attempt {task.attempt}", flush=True)
                break
            if time.monotonic() > deadline:
                print(f"producer: {action} {task.id} is still {enum_name(pb.TaskState, task.state)} "
                      f"after {timeout:g}s: is a worker running?", file=sys.stderr)
                return False
            time.sleep(0.2)
    return True


def main():
    parser = argparse.ArgumentParser(description="Enqueues the demo set of example.job tasks.")
    parser.add_argument("--server", default="127.0.0.1:7420", help="the grit server, HOST:PORT")
    parser.add_argument("--slow", type=float, default=3.0, help="seconds the slow task works")
    parser.add_argument("--wait", action="store_true", help="wait for every task to end and print how")
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds --wait waits at most")
    opts = parser.parse_args()

    channel, metadata = connect(opts.server)
    tasks = rpc.TasksServiceStub(channel)
    try:
        enqueued = enqueue(tasks, metadata, opts.slow)
        if opts.wait and not wait(tasks, metadata, enqueued, opts.timeout):
            sys.exit(1)
    except grpc.RpcError as err:
        sys.exit(f"producer: {reason(err)}")


if __name__ == "__main__":
    main()
