#!/usr/bin/python3
"""A grit worker in Python, written against grit's gRPC API alone.

It claims tasks of kind example.job, works each in a thread (up to
--concurrency at once) while one heartbeat renews the leases of all it
holds, and reports how each attempt ended with Complete, Fail or Snooze.
A task's args say what to do:

    {"action": "ok"}                     complete
    {"action": "flaky", "failures": N}   fail TRANSIENT while the attempt is N or less
    {"action": "reject"}                 fail PERMANENT: FAILED, whatever the policy
    {"action": "later", "seconds": S}    snooze S seconds the first time, then complete
    {"action": "slow", "seconds": S}     work S seconds under the heartbeat, then complete

With the stubs generated (./genstubs) and a grit server up:

    ./worker.py --server 127.0.0.1:7420 --worker-id py-1 --lease 15

It prints a line per event on stdout (claimed, completed, failed,
snoozed, lost), and a report the server refused on stderr, with the
reason. The token, if the server wants one, is $GRIT_TOKEN. On SIGTERM
or Ctrl-C it stops claiming, finishes and reports the tasks it holds,
and exits 0.
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback
from concurrent.futures import ThreadPoolExecutor

import grpc

from gritconn import connect, duration, enum_name, pb, reason, rpc

KIND = "example.job"
# How long a Claim waits for a task when none is due. A stop asked for
# while a Claim waits is heard when it answers: the tasks it brings are
# this worker's, and are worked before it exits.
CLAIM_WAIT = 5.0
# How long any other call may take.
CALL_TIMEOUT = 10.0


_print_lock = threading.Lock()


def emit(line, file=sys.stdout):
    """Prints one event's line at once: threads print whole lines, and a
    program reading the output sees each as it happens."""
    with _print_lock:
        print(line, file=file, flush=True)


def permanent(message):
    return pb.Failed(error_class=pb.ERROR_CLASS_PERMANENT, message=message)


class BadArgs(Exception):
    """The task's args cannot be worked: a permanent failure."""


def number(args, key):
    value = args.get(key)
    if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
        raise BadArgs(f'args: "{key}" is {json.dumps(value)}: want a number, 0 or more')
    return value


class Worker:
    def __init__(self, server, worker_id, lease, concurrency):
        channel, self.metadata = connect(server)
        self.workers = rpc.WorkersServiceStub(channel)
        self.id, self.lease, self.concurrency = worker_id, lease, concurrency
        self.stopping = threading.Event()
        # held maps the lease token of each task being worked to its Lease
        # and an Event set when the server says the lease is lost.
        self.held = {}
        self.running = 0
        self.cond = threading.Condition()  # guards held and running
        self.pool = ThreadPoolExecutor(max_workers=concurrency)

    def run(self):
        """Claims and works tasks until stopping is set, then waits for the
        tasks it holds to end and deactivates the worker."""
        beat_done = threading.Event()
        beat = threading.Thread(target=self.heartbeat, args=(beat_done,), daemon=True)
        beat.start()
        while not self.stopping.is_set():
            free = self.free_slots()
            if free == 0:
                continue
            for task in self.claim(free):
                with self.cond:
                    self.running += 1
                self.pool.submit(self.work, task)
        self.pool.shutdown(wait=True)
        beat_done.set()
        beat.join()
        try:
            # It holds nothing now; inactive, it is not waited for.
            self.workers.Release(pb.ReleaseRequest(worker_id=self.id, deactivate=True),
                                 metadata=self.metadata, timeout=CALL_TIMEOUT)
        except grpc.RpcError as err:
            emit(f"release: {reason(err)}", file=sys.stderr)

    def free_slots(self):
        """Waits for a thread to be free and says how many are; 0 if
        stopping came first."""
        with self.cond:
            while self.running >= self.concurrency and not self.stopping.is_set():
                self.cond.wait(0.5)
            return 0 if self.stopping.is_set() else self.concurrency - self.running

    def claim(self, limit):
        req = pb.ClaimRequest(worker_id=self.id, kinds=[KIND], limit=limit,
                              lease=duration(self.lease), wait=duration(CLAIM_WAIT),
                              host=socket.gethostname(), pid=os.getpid())
        try:
            resp = self.workers.Claim(req, metadata=self.metadata, timeout=CLAIM_WAIT + CALL_TIMEOUT)
            return resp.tasks
        except grpc.RpcError as err:
            emit(f"claim: {reason(err)}", file=sys.stderr)
            self.stopping.wait(1)  # the server may be restarting: not in a tight loop
            return []

    def work(self, task):
        """Works one claimed task and reports how it ended, unless its
        lease was lost on the way: then the task is someone else's."""
        lost = threading.Event()
        with self.cond:
            self.held[task.lease_token] = (pb.Lease(task_id=task.id, lease_token=task.lease_token), lost)
        emit(f"claimed {task.id} attempt {task.attempt}")
        try:
            end = self.attempt(task, lost)
            with self.cond:
                # From here on no heartbeat speaks for the task: one in
                # flight may come back saying it is lost because the report
                # below ended it, and that must not count.
                del self.held[task.lease_token]
                abandoned = lost.is_set()
            if not abandoned:
                self.report(task, end)
        except Exception:  # a bug in this worker: the lease brings the task back
            emit(f"task {task.id}: {traceback.format_exc()}", file=sys.stderr)
        finally:
            with self.cond:
                self.held.pop(task.lease_token, None)
                self.running -= 1
                self.cond.notify_all()

    def attempt(self, task, lost):
        """Acts on the task and says how the attempt ended, its errors
        classified: bad args are PERMANENT, a failed call TRANSIENT, and
        anything else is left to the task's policy and poison detection."""
        try:
            return self.act(task, lost)
        except BadArgs as err:
            return permanent(str(err))
        except grpc.RpcError as err:  # a call the work needed
            return pb.Failed(error_class=pb.ERROR_CLASS_TRANSIENT, message=reason(err))
        except Exception as err:
            return pb.Failed(error_class=pb.ERROR_CLASS_UNCLASSIFIED, message=f"{type(err).__name__}: {err}")

    def act(self, task, lost):
        """Does what the task's args say; returns how the attempt ended: a
        pb.Completed, pb.Failed or pb.Snoozed (what a Report's result
        carries), or None when the lease was lost."""
        if not task.args:
            raise BadArgs('no args: want {"action": ...}')
        try:
            args = json.loads(task.args)
        except ValueError as err:
            raise BadArgs(f'args are not JSON ({err}): want {{"action": ...}}') from None
        if not isinstance(args, dict):
            raise BadArgs(f'args are {json.dumps(args)}: want an object, {{"action": ...}}')
        action = args.get("action")
        if action == "ok":
            return pb.Completed(output="done")
        if action == "flaky":
            failures = number(args, "failures")
            if task.attempt <= failures:
                return pb.Failed(error_class=pb.ERROR_CLASS_TRANSIENT,
                                 message=f"downstream unavailable (attempt {task.attempt} of {failures} failures)")
            return pb.Completed(output=f"downstream answered at attempt {task.attempt}")
        if action == "reject":
            return permanent("the card was declined")
        if action == "later":
            seconds = number(args, "seconds")
            # A snooze gives its attempt back: the task comes back at the
            # same attempt number, and snoozes counts its looks, whichever
            # worker made them.
            if task.snoozes > 0:
                return pb.Completed(output="ready after the snooze")
            return pb.Snoozed(delay=duration(seconds))
        if action == "slow":
            return self.slow(number(args, "seconds"), lost)
        raise BadArgs(f"unknown action {json.dumps(action)}: want ok, flaky, reject, later or slow")

    def slow(self, seconds, lost):
        """Works for seconds in small steps, giving up when the lease is
        lost; the heartbeat keeps the lease meanwhile."""
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            if lost.wait(min(left, 0.1)):
                return None
        return pb.Completed(output=f"worked {seconds}s")

    def report(self, task, end):
        """Reports how the attempt ended with Complete, Fail or Snooze, and
        prints it; a refusal is printed on stderr with its reason."""
        ids = {"task_id": task.id, "lease_token": task.lease_token, "worker_id": self.id}
        if isinstance(end, pb.Completed):
            verb, call, req = "complete", self.workers.Complete, pb.CompleteRequest(output=end.output, **ids)
            line = f"completed {task.id}"
        elif isinstance(end, pb.Failed):
            verb, call = "fail", self.workers.Fail
            req = pb.FailRequest(error_class=end.error_class, message=end.message, **ids)
            line = f"failed {task.id} {enum_name(pb.ErrorClass, end.error_class)}"
        else:
            verb, call, req = "snooze", self.workers.Snooze, pb.SnoozeRequest(delay=end.delay, **ids)
            line = f"snoozed {task.id}"
        # A report whose answer was lost is sent again: the server answers
        # OK to one it recorded under the same lease token.
        for wait in (0.2, 1, 3, None):
            try:
                call(req, metadata=self.metadata, timeout=CALL_TIMEOUT)
                emit(line)
                return
            except grpc.RpcError as err:
                retry = err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
                if not retry or wait is None:
                    emit(f"{verb} {task.id} refused: {reason(err)}", file=sys.stderr)
                    return
                time.sleep(wait)

    def heartbeat(self, done):
        """Renews the leases of every task held, in one call every third of
        the lease; a lease the server says is lost makes its task give up."""
        while not done.wait(self.lease / 3):
            with self.cond:
                leases = [lease for lease, _ in self.held.values()]
            if not leases:
                continue
            req = pb.HeartbeatRequest(worker_id=self.id, leases=leases, lease=duration(self.lease))
            try:
                resp = self.workers.Heartbeat(req, metadata=self.metadata, timeout=self.lease)
            except grpc.RpcError as err:
                emit(f"heartbeat: {reason(err)}", file=sys.stderr)
                continue
            with self.cond:
                # Only a task still worked is lost: one that ended since
                # this heartbeat left was ended by its own report.
                for lease in resp.lost:
                    if lease.lease_token in self.held:
                        emit(f"lost {lease.task_id}")
                        self.held[lease.lease_token][1].set()


def main():
    parser = argparse.ArgumentParser(description="Works grit tasks of kind example.job.")
    parser.add_argument("--server", default="127.0.0.1:7420", help="the grit server, HOST:PORT")
    parser.add_argument("--worker-id", default=f"py-{socket.gethostname()}-{os.getpid()}",
                        help="the worker's name (default py-HOST-PID)")
    parser.add_argument("--lease", type=float, default=15.0,
                        help="seconds a claim holds a task without a heartbeat (at least 1)")
    parser.add_argument("--concurrency", type=int, default=4, help="the most tasks worked at once")
    opts = parser.parse_args()
    if opts.lease < 1:
        parser.error(f"--lease {opts.lease}: want at least 1 second")
    if opts.concurrency < 1:
        parser.error(f"--concurrency {opts.concurrency}: want at least 1")

    worker = Worker(opts.server, opts.worker_id, opts.lease, opts.concurrency)
    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, lambda *_: worker.stopping.set())
    worker.run()


if __name__ == "__main__":
    main()
